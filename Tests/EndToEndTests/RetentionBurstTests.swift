import Foundation
import Testing
import TestSupport

/// SPEC 12.3: the pruner gives way to bursts. Old rows come due the moment a burst's start window opens, so two
/// workers delete them (`RETENTION_INTERVAL_SECONDS=1`, batches of 1,000) while they send the burst's starts; every start
/// must still go out on time. Quick size by default (100,000 old ledger rows, 1,000 streams);
/// `COUNTDOWN_RETENTION_FULL=1` deletes a million beside 2,000 streams (docs/reliability.md records that run).
@Suite(.serialized) struct RetentionBurstTests {
    @Test func aBurstStartsOnTimeWhileThePrunerDeletesOldRows() async throws {
        let full = ProcessInfo.processInfo.environment["COUNTDOWN_RETENTION_FULL"] == "1"
        let (oldRows, streams) = full ? (1_000_000, 2000) : (100_000, 1000)
        let system = try await CountdownSystem(settings: ["RETENTION_INTERVAL_SECONDS": "1", "RETENTION_BATCH_ROWS": "1000"])
        let startsIn = 14
        // The old rows: 100 streams that expired long ago, their ledger rows, made due exactly when the burst's
        // window opens (RETENTION_DAYS is 30: they left `scheduled` 30 days before that moment).
        try await system.execute("""
            INSERT INTO streams (id, title, planned_start_at, status) SELECT 'old' || i, 'Old', now() - interval '31 days', 'expired'
            FROM generate_series(1, 100) i
            """)
        try await system.execute("""
            INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status, sent_at)
            SELECT 'old' || (i % 100 + 1), 'old-u' || i, 'old-d' || i, 'sent', now() - interval '31 days' FROM generate_series(1, $1) i
            """, [oldRows])
        try await system.burst(streams, startsIn: startsIn)
        let planned = try await system.plannedStart("s1")
        let due = planned.addingTimeInterval(-Double(system.startLead))
        try await system.execute("""
            UPDATE countdown_stream_ends SET left_scheduled_at = $1::timestamptz - interval '30 days' WHERE stream_id LIKE 'old%'
            """, [due])
        try await system.execute("DELETE FROM countdown_outbox WHERE stream_id LIKE 'old%'")
        let remaining = { @Sendable in
            try await system.query("SELECT count(*) AS n FROM countdown_start_ledger WHERE stream_id LIKE 'old%'")[0].decode("n", as: Int.self)
        }
        _ = try await system.startWorkers(2)

        // The old rows as the burst goes: sampled until the last start is in.
        let sampling = Task {
            var samples: [(Date, Int)] = []
            while !Task.isCancelled {
                if let left = try? await remaining() { samples.append((Date(), left)) }
                try? await Task.sleep(for: .milliseconds(100))
            }
            return samples
        }
        let pushes = try await system.waitForPushes(timeout: .seconds(60), "every stream's start") { pushes in
            Set(pushes.events("start").map(\.fcmToken)).count == streams
        }
        sampling.cancel()
        let samples = await sampling.value
        let starts = pushes.events("start").map { $0.receivedAt.timeIntervalSince(due) }
        let (first, last) = (starts.min() ?? 0, starts.max() ?? 0)
        let during = samples.filter { $0.0 >= due.addingTimeInterval(first) && $0.0 <= due.addingTimeInterval(last) }.map(\.1)
        print("""
            retention burst: \(streams) starts, \(oldRows) old ledger rows; lateness p50 \(String(format: "%.2f", percentile(starts, 0.5))) s, \
            p99 \(String(format: "%.2f", percentile(starts, 0.99))) s, last \(String(format: "%.2f", last)) s; old rows during the burst \
            \(during.max() ?? -1) → \(during.min() ?? -1)
            """)
        #expect(first >= -0.05, "no start before its window")
        #expect(last < 5, "the last start \(last) s after the due second (bound 5 s, as the chaos scenarios')")
        #expect((during.max() ?? 0) > (during.min() ?? 0), "the pruner was deleting while the burst went out: \(during)")
        try await waitUntil(timeout: .seconds(full ? 300 : 60), "every old row deleted") { try await remaining() == 0 }
        #expect(try await system.query("SELECT count(*) AS n FROM countdown_start_ledger WHERE stream_id LIKE 's%' AND status = 'sent'")[0]
            .decode("n", as: Int.self) == streams, "the burst's own ledger rows stay")
        await system.stop()
    }
}
