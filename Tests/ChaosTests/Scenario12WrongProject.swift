import Foundation
import Testing
import TestSupport

extension ChaosSuite {
    /// Every send answered SENDER_ID_MISMATCH for 10 s of a burst (a wrong Firebase project): the token guard clears
    /// at most TOKEN_GUARD_MIN_REFUSALS tokens, `tokens restore` brings them back (and their starts go out),
    /// everything is delivered once.
    @Test("12. a wrong Firebase project during a burst (token guard)")
    func scenario12WrongProject() async throws {
        try await ChaosScenario.run(number: 12, title: "a wrong Firebase project during a burst (token guard)", latencyMilliseconds: 30) { s in
            let window = 10.0
            _ = try await s.startWorkers(2)
            let due = try await s.seed(s.size(200, 1000))
            try await s.waitUntil(due - 1)
            try await s.system.fault(["status": 403, "errorCode": "SENDER_ID_MISMATCH", "forSeconds": Int(window)])
            let began = Date().timeIntervalSince1970
            try await s.waitUntil(began + window)
            var tripped = false
            for worker in s.system.workers where worker.isRunning {
                if await worker.metrics()["countdown_push_token_guard_tripped"] == 1 { tripped = true }
            }
            // Held refusals are retried 60 s later, once the project is right again.
            _ = try await s.waitQuiet(timeout: s.size(120, 150))
            let people = s.people + "%"
            let cleared = try await s.system.query(
                "SELECT push_to_start_token FROM devices WHERE device_id LIKE $1 AND fcm_token IS NULL", [people]
            ).map { try $0.decode("push_to_start_token", as: String?.self) }
            let restored = try await s.system.adminJSON(["tokens", "restore", "--since", "10m", "--reason", "SENDER_ID_MISMATCH", "--yes"])
            let left = try await s.system.query("SELECT count(*) AS n FROM devices WHERE device_id LIKE $1 AND fcm_token IS NULL", [people])[0]
                .decode("n", as: Int.self)
            let rejected = try s.system.fakeRequestLog().count { $0.status == 403 }
            s.note("SENDER_ID_MISMATCH for \(Int(window))s from 1s before the due second: \(rejected) sends refused; \(cleared.count) FCM tokens "
                   + "cleared before the guard tripped; tokens restore: \(Self.compactJSON(restored))")
            s.check(rejected >= 20, "the misconfiguration was hit (\(rejected) refusals)")
            s.check(tripped, "countdown_push_token_guard_tripped was 1 on a worker")
            s.check(cleared.count <= 20, "at most TOKEN_GUARD_MIN_REFUSALS tokens cleared (\(cleared.count) ≤ 20)")
            s.check(left == 0, "tokens restore brought every cleared token back (\(left) left)")
            // The restored tokens queue a backfill for their devices, which re-opens and sends their starts.
            _ = try await s.waitQuiet(timeout: s.size(60, 90))
            return nil
        }
    }

    /// `value` as one line of JSON, for a note.
    private static func compactJSON(_ value: Any) -> String {
        guard JSONSerialization.isValidJSONObject(value),
              let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return "\(value)"
        }
        return String(decoding: data, as: UTF8.self)
    }
}
