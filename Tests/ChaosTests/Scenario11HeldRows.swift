import Foundation
import Postgres
import Testing
import TestSupport

extension ChaosSuite {
    /// The backend holds FOR UPDATE on every tenth stream's row for 40 s (12 s quick) across the due second: the
    /// other streams start on time, the held ones right after the release.
    @Test("11. the backend holds FOR UPDATE on some streams for 40 s during a burst")
    func scenario11HeldRows() async throws {
        try await ChaosScenario.run(number: 11, title: "the backend holds FOR UPDATE on some streams for 40 s during a burst",
                                    latencyMilliseconds: 30) { s in
            let hold = s.size(12, 40)
            let streams = s.size(200, 1000)
            _ = try await s.startWorkers(2)
            let due = try await s.seed(streams)
            let held = Set(stride(from: 1, through: streams, by: 10).map { "\(s.prefix)\($0)" })
            try await s.waitUntil(due - 2)
            // The backend's transaction, on a connection of its own for the whole hold.
            let backend = PostgresClient(configuration: s.system.database.configuration, maxConnections: 1)
            defer { backend.close() }
            let listed = held.sorted().joined(separator: ",")
            let holder = Task {
                try await backend.transaction { connection in
                    _ = try connection.query("SELECT id FROM streams WHERE id = ANY(string_to_array($1, ',')) FOR UPDATE", [listed])
                    _ = try connection.query("SELECT pg_sleep($1)", [Double(hold)])
                }
            }
            try await waitUntil(timeout: .seconds(10), every: .milliseconds(50), "the backend transaction to hold the rows") {
                try await s.system.query("""
                    SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE $1
                    """, ["SELECT pg_sleep%"])[0].decode("n", as: Int.self) > 0
            }
            let taken = Date().timeIntervalSince1970
            let outcome = await holder.result
            let released = Date().timeIntervalSince1970
            let committed = (try? outcome.get()) != nil
            s.note("\(held.count) of \(streams) streams held FOR UPDATE from \(ChaosScenario.signed(taken - due, 1))s to \(ChaosScenario.signed(released - due, 1))s"
                   + " against the due second (" + (committed ? "committed" : "transaction failed") + ")")
            _ = try await s.waitQuiet(timeout: s.size(60, 120))
            try s.tally.refresh()
            let starts = s.tally.starts.filter { $0.key.stream.hasPrefix(s.prefix) }
            let freeTimes = starts.filter { !held.contains($0.key.stream) }.map(\.receivedAt)
            let heldTimes = starts.filter { held.contains($0.key.stream) }.map(\.receivedAt)
            let freeLate = freeTimes.map { $0 - due }.max() ?? 0
            s.check(!freeTimes.isEmpty && freeLate <= 5,
                    "the streams not held started on time (latest " + ChaosScenario.fixed(freeLate, 2) + "s after the due second, bound 5s)")
            if let firstHeld = heldTimes.min(), let lastHeld = heldTimes.max() {
                s.check(firstHeld >= released - 0.5,
                        "no held stream started before the release (first " + ChaosScenario.signed(firstHeld - released, 2) + "s)")
                s.check(lastHeld - released <= 5,
                        "the held streams started right after the release (last " + ChaosScenario.signed(lastHeld - released, 2) + "s, bound 5s)")
            } else {
                s.check(false, "the held streams started")
            }
            return nil
        }
    }
}
