import Foundation
import Postgres
import Testing
import TestSupport

/// SPEC 12.5, creation is idempotent across crashes: a worker SIGKILLed while creating channels for a burst (each
/// creation held 6 s at the fake APNs, so several are in flight) leaves one channel per stream at APNs once another
/// worker took over: the dead worker's intents are taken over after their hold, and the channels APNs created for it
/// that it never recorded (their rows locked until it died) are found by listing and deleted.
@Suite(.serialized) struct APNsBroadcastCrashTests {
    @Test func aWorkerKilledWhileCreatingChannelsLeavesOnePerStream() async throws {
        let apns = try await FakeAPNsProcess()
        // The keeper deletes orphans on its second round after the takeover (it notes them, then deletes them), so
        // the test runs past the streams' planned start (45 s): they stay `scheduled` throughout (no expiry, no end
        // broadcast retiring their channels), or the channels recorded would be those of ended streams.
        let system = try await CountdownSystem(settings: apns.workerEnvironment.merging([
            "START_LEAD_SECONDS": "60", "REMINDER_TRANSPORT": "off", "APNS_BROADCAST": "on", "EXPIRE_AFTER_SECONDS": "3600",
        ]) { $1 })
        let streams = (1...12).map { "s\($0)" }
        for (index, stream) in streams.enumerated() {
            try await system.user("u\(index)")
            try await system.device("d\(index)", user: "u\(index)")
            try await system.stream(stream, startsIn: 45, creator: "u\(index)")
        }
        try await system.execute("INSERT INTO countdown_device_os (device_id, os_version, major) SELECT device_id, '18.0', 18 FROM devices")
        // 6 s (under the 10 s request timeout): the intents must stay in flight longer than a loaded test process may
        // take between two looks (with 2 s a CI run's looks missed all twelve, in flight from 0.6 to 2.8 s after the
        // worker started).
        try await apns.control.fault(["latencyMs": 6000])
        // One transaction locks every intent within 100 ms of its commit, from before the worker starts until after
        // the kill (the release row), so APNs creates the channels (after the fake's 6 s) while their rows are locked
        // longer than the worker's lock_timeout (5 s): it cannot record them, even with the statements it left behind
        // when it died. (Locking once, after the test saw three intents, came too late on a loaded machine: the
        // worker had recorded every channel.)
        try await system.execute("CREATE TABLE test_lock_release (released boolean)")
        let locked = Task {
            try await system.execute("""
                DO $$ BEGIN
                    FOR i IN 1..1200 LOOP
                        PERFORM 1 FROM countdown_broadcast_channels WHERE state = 'intent' FOR UPDATE;
                        EXIT WHEN EXISTS (SELECT 1 FROM test_lock_release);
                        PERFORM pg_sleep(0.1);
                    END LOOP;
                END $$
                """)
        }
        let firstName = "countdown-doomed"
        let first = try system.startWorker(["DATABASE_URL": try system.database.url(applicationName: firstName)])
        try await waitUntil(timeout: .seconds(60), every: .milliseconds(20), "channel intents in flight") {
            try await Self.count(system, "state = 'intent'") >= 3
        }
        try await waitUntil(timeout: .seconds(30), every: .milliseconds(20), "channels created at the fake APNs") {
            try await APNsBroadcastFlowTests.channels(apns).count >= 3
        }
        first.kill9()
        _ = await first.waitForExit(timeout: 10)
        // Its records still waiting for the locks fail at its lock_timeout and its backends end: released earlier,
        // a waiting record would take the lock and commit after the kill.
        try await waitUntil(timeout: .seconds(30), "the killed worker's PostgreSQL backends gone") {
            try await system.backends(applicationName: firstName) == 0
        }
        try await system.execute("INSERT INTO test_lock_release VALUES (true)")
        try await locked.value
        let atKill = Set(try await APNsBroadcastFlowTests.channels(apns))
        try await apns.control.fault(["latencyMs": 0])
        // The dead worker's intents are taken over once their hold (60 s) passed: moved back rather than waited for.
        try await system.execute("UPDATE countdown_broadcast_channels SET intent_at = intent_at - interval '5 minutes' WHERE state = 'intent'")
        try system.startWorker()
        try await waitUntil(timeout: .seconds(90), every: .milliseconds(200), "a channel for every stream") {
            try await Self.count(system, "state IN ('created', 'in_use')") == streams.count
        }
        // Channels recorded before the lock (intents it did not see yet) are the streams' own; the rest are orphans.
        let orphans = atKill.subtracting(try await system.query("SELECT channel_id FROM countdown_broadcast_channels WHERE channel_id IS NOT NULL")
            .map { try $0.decode("channel_id", as: String.self) })
        #expect(!orphans.isEmpty, "the dead worker left channels created at APNs and never recorded")
        // Orphans are deleted once unnamed for twice the hold: theirs moved back too (only theirs: a channel noted
        // unnamed while its creator recorded it must keep its grace), until the keeper's rounds deleted them all.
        try await waitUntil(timeout: .seconds(120), every: .seconds(1), "the orphans deleted at the fake APNs") {
            try await system.execute("UPDATE countdown_broadcast_orphans SET first_seen_at = now() - interval '10 minutes' WHERE channel_id = ANY($1)",
                                     [PostgresTextArray(Array(orphans))])
            return orphans.isDisjoint(with: Set(try await APNsBroadcastFlowTests.channels(apns)))
        }
        let recorded = try await system.query("SELECT channel_id FROM countdown_broadcast_channels WHERE state IN ('created', 'in_use')")
            .map { try $0.decode("channel_id", as: String.self) }
        let atAPNs = try await APNsBroadcastFlowTests.channels(apns)
        #expect(atAPNs.count == streams.count, "one channel per stream at APNs: \(atAPNs.count)")
        #expect(Set(recorded) == Set(atAPNs), "the channels at APNs are the recorded ones")
        let perStream = try await system.query("""
            SELECT count(*)::int AS n FROM countdown_broadcast_channels WHERE state IN ('intent', 'created', 'in_use') GROUP BY stream_id
            """).map { try $0.decode("n", as: Int.self) }
        #expect(perStream == Array(repeating: 1, count: streams.count))
        await system.stop()
        apns.stop()
    }

    static func count(_ system: CountdownSystem, _ condition: String) async throws -> Int {
        try await system.query("SELECT count(*)::int AS n FROM countdown_broadcast_channels WHERE \(condition)").first?.decode("n", as: Int.self) ?? 0
    }
}
