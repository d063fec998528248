import Foundation
import Testing
import TestSupport

extension ChaosSuite {
    /// 10% of the FCM tokens answer UNREGISTERED: each is tried once, cleared and recorded as a dead token in the
    /// ledger; every other start is delivered.
    @Test("7. 10% of tokens UNREGISTERED")
    func scenario07Unregistered() async throws {
        try await ChaosScenario.run(number: 7, title: "10% of tokens UNREGISTERED", latencyMilliseconds: 30) { s in
            _ = try await s.startWorkers(2)
            let due = try await s.seed(s.size(100, 1000))
            var generator = SeededGenerator(seed: UInt64(s.number))
            let sorted = s.expected.sorted { ($0.stream, $0.token) < ($1.stream, $1.token) }
            let chosen = Array(sorted.shuffled(using: &generator).prefix(max(1, s.expected.count / 10)))
            let rows = try await s.system.query(
                "SELECT device_id, fcm_token FROM devices WHERE push_to_start_token = ANY(string_to_array($1, ','))",
                [chosen.map(\.token).joined(separator: ",")])
            var dead: [String: String] = [:]
            for row in rows { dead[try row.decode("device_id")] = try row.decode("fcm_token", as: String.self) }
            try await s.system.fakeClient.fault(dead.values.map { ["token": $0, "status": 404, "errorCode": "UNREGISTERED"] as [String: Any] })
            try await s.waitUntil(due)
            _ = try await s.waitQuiet(timeout: s.size(40, 90))
            let live = s.expected.subtracting(chosen)
            let suffixes = Set(dead.values.map { String($0.suffix(8)) })
            var perDead: [String: Int] = [:]
            for request in try s.system.fakeRequestLog() where suffixes.contains(request.token) { perDead[request.token, default: 0] += 1 }
            let devices = dead.keys.sorted().joined(separator: ",")
            let cleared = try await s.system.query(
                "SELECT count(*) AS n FROM devices WHERE device_id = ANY(string_to_array($1, ',')) AND fcm_token IS NULL", [devices]
            )[0].decode("n", as: Int.self)
            let failed = try await s.system.query("""
                SELECT count(*) AS n FROM countdown_start_ledger WHERE device_id = ANY(string_to_array($1, ','))
                AND status = 'failed' AND reason LIKE $2
                """, [devices, "dead_token:%"])[0].decode("n", as: Int.self)
            s.note("\(dead.count) of \(s.expected.count) tokens UNREGISTERED: \(cleared) cleared, \(failed) ledger rows failed as dead_token, "
                   + "requests per dead token: \(Set(perDead.values).sorted())")
            s.check(cleared == dead.count, "every dead token cleared (\(cleared)/\(dead.count))")
            s.check(perDead.count == dead.count && perDead.values.allSatisfy { $0 == 1 }, "each dead token was tried exactly once")
            s.check(failed == dead.count, "ledger records each dead token (\(failed)/\(dead.count))")
            return live
        }
    }
}
