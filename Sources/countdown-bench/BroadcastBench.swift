import Foundation
import TestSupport

/// `countdown-bench broadcast`: the end of one stream with many activities on its broadcast channel (SPEC 12.5,
/// `APNS_BROADCAST=on`), against a real worker (`PUSH_TRANSPORT=apns`) and the fake APNs behind nghttpx.
///
/// A real start puts one iOS 18 device on the stream's channel (the worker creates the channel at the fake); then
/// N more iOS 18 devices are seeded in SQL as guests whose starts went on that channel (ledger rows `sent`, as the
/// start fan-out writes them). The stream is cancelled with one UPDATE, as the API and the admin tool do, and the
/// fake's accepted requests after it are counted: one broadcast, no token push, accepted within 1 s is the target.
///
/// It runs against the servers `scripts/bench broadcast` started (TestEnvironment's COUNTDOWN_TEST_* variables) and
/// the executables in COUNTDOWN_SYSTEM_BIN_DIR.
enum BroadcastBench {
    static let usage = """
        usage: countdown-bench broadcast [--subscribers N]
          --subscribers N   activities on the stream's channel besides the one started for real (default 100000)
        """
    static let stream = "bcast1"

    /// Runs the benchmark; returns the exit code, or throws an error in `arguments`.
    static func main(_ arguments: [String]) async throws -> Int32 {
        let subscribers = try BenchOptions(arguments).int("subscribers", default: 100_000)
        guard subscribers >= 0 else { throw BenchError("--subscribers must be 0 or more (got \(subscribers))") }
        let children = BenchChildren.ofThisBenchmark()
        do {
            let result = try await run(subscribers: subscribers, children: children)
            FileHandle.standardOutput.write(Data(BroadcastBenchReport.text(result).utf8))
            // A missed target is a finding (MISS); no end broadcast at all is a failure.
            return result.broadcastRequests > 0 ? 0 : 1
        } catch {
            progress("error: \(error)")
            return 1
        }
    }

    static func run(subscribers: Int, children: BenchChildren) async throws -> BroadcastBenchResult {
        let apns = try await FakeAPNsProcess()
        defer { apns.stop() }
        children.record(apns.fake.pid, executable: apns.fake.executable)
        children.record(apns.proxy.pid, executable: apns.proxy.executable)
        var options = SystemOptions()
        options.name = "broadcast"
        options.settings = apns.workerEnvironment.merging(["START_LEAD_SECONDS": "30", "REMINDER_TRANSPORT": "off", "APNS_BROADCAST": "on"]) { $1 }
        let system = try await CountdownSystem(options)
        children.record(system.fake.process.pid, executable: system.fake.process.executable)
        do {
            let result = try await measure(system, apns, subscribers: subscribers, children: children)
            await system.stop()
            return result
        } catch {
            await system.stop()
            throw error
        }
    }

    private static func measure(_ system: CountdownSystem, _ apns: FakeAPNsProcess, subscribers: Int,
                                children: BenchChildren) async throws -> BroadcastBenchResult {
        try await system.user("bcast-creator", name: "Selin Kaya")
        try await system.device("bcast-iphone", user: "bcast-creator")
        try await system.execute("INSERT INTO countdown_device_os (device_id, os_version, major) VALUES ('bcast-iphone', '18.2', 18)")
        let worker = try system.startWorker()
        children.record(worker.pid, executable: worker.process.executable)
        try await system.stream(stream, title: "Büyük final", startsIn: 20, creator: "bcast-creator")
        let started = try await apns.waitForPushes(timeout: .seconds(60), "the start on the channel") { pushes in
            pushes.contains { $0.event == "start" && $0.aps["input-push-channel"] != nil }
        }
        let channel = started.first { $0.event == "start" }?.aps["input-push-channel"] as? String ?? "?"
        progress("stream \(stream) started on channel \(channel); seeding \(subscribers) more activities on it")
        let seeding = Date()
        try await seed(system, subscribers: subscribers)
        progress("seeded in \(String(format: "%.1f", Date().timeIntervalSince(seeding)))s")
        // The new guests' rows make the start job run again (a retry, delayed): it finds every start sent. The end is
        // measured alone, once no start or backfill is queued.
        try await waitUntil(timeout: .seconds(900), every: .milliseconds(200), "the start fan-out to be done before the end") {
            let stats = try await system.queueStats()
            guard stats.dueNow == 0, stats.leased == 0, try await system.outboxBacklog() == 0 else { return false }
            for kind in ["start", "backfill_user", "backfill_device"] where try await !system.queuedJobs(kind: kind).isEmpty { return false }
            return true
        }
        let before = try await apns.pushes().map(\.seq).max() ?? 0

        let load = SystemBench.loadAverage()
        let changedAt = Date().timeIntervalSince1970
        try await system.execute("UPDATE streams SET status = 'cancelled' WHERE id = $1", [stream])
        _ = try? await apns.waitForPushes(timeout: .seconds(60), "the end broadcast") { pushes in
            pushes.contains { $0.seq > before && $0.kind == "broadcast" && $0.event == "end" }
        }
        // Anything else the end sends comes with it or shortly after: the job is done once the queue is idle.
        var idle = true
        do { try await system.waitForIdle(timeout: .seconds(120), "the end job to finish") } catch { idle = false }
        let after = try await apns.pushes().filter { $0.seq > before }
        let broadcasts = after.filter { $0.kind == "broadcast" }
        if broadcasts.isEmpty || !idle {
            // What the worker did with the end instead: its last log lines.
            let lines = (try? String(contentsOfFile: worker.logPath, encoding: .utf8))?.split(separator: "\n").suffix(30) ?? []
            progress("\(broadcasts.isEmpty ? "no end broadcast" : "the end job did not finish"); the worker's last log lines:\n" + lines.joined(separator: "\n"))
            let status = try? await system.query("SELECT status FROM streams WHERE id = $1", [stream]).first?.decode("status", as: String.self)
            let stats = try? await system.queueStats()
            let ends = try? await system.queuedJobs(kind: "end")
            progress("stream \(status ?? "?"), outbox \((try? await system.outboxBacklog()) ?? -1), queue \(stats.map { "\($0)" } ?? "?"), end jobs \(ends ?? [])")
        }
        return BroadcastBenchResult(
            subscribers: subscribers + 1, broadcastRequests: broadcasts.count, tokenRequests: after.count - broadcasts.count,
            acceptedAfterSeconds: broadcasts.first.map { SystemBenchReport.rounded($0.receivedAt - changedAt, 3) }, loadAverage: load)
    }

    /// `subscribers` iOS 18 guests of the stream, each with a device whose start went on the channel.
    private static func seed(_ system: CountdownSystem, subscribers: Int) async throws {
        guard subscribers > 0 else { return }
        try await system.db.transaction { connection in
            try connection.execute("INSERT INTO users (id, display_name, locale) SELECT 'bcu' || i, 'Fan ' || i, 'tr' FROM generate_series(1, $1) i",
                                   [subscribers])
            try connection.execute("""
                INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token)
                SELECT 'bcd' || i, 'bcu' || i, 'ios', 'fcm-bc-' || md5('bc' || i), md5('pts-bc' || i) || md5('bc' || i)
                FROM generate_series(1, $1) i
                """, [subscribers])
            try connection.execute("""
                INSERT INTO countdown_device_os (device_id, os_version, major) SELECT 'bcd' || i, '18.2', 18 FROM generate_series(1, $1) i
                """, [subscribers])
            try connection.execute("""
                INSERT INTO stream_participants (stream_id, user_id, role, position)
                SELECT $1::text, 'bcu' || i, 'guest', i FROM generate_series(1, $2) i
                """, [stream, subscribers])
            try connection.execute("""
                INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status, attempts, token_hash, sent_at, updated_at)
                SELECT $1::text, 'bcu' || i, 'bcd' || i, 'sent', 1, md5(md5('pts-bc' || i) || md5('bc' || i)), now(), now()
                FROM generate_series(1, $2) i
                """, [stream, subscribers])
            // These guests joined and registered long before (their starts went): their outbox rows go before the relay
            // sees them, or it would queue a backfill per guest.
            try connection.execute("DELETE FROM countdown_outbox WHERE topic IN ('device', 'participant', 'user')")
        }
        try await system.db.withConnection { try $0.executeScript(SystemBench.analyze + " ANALYZE countdown_start_ledger; ANALYZE countdown_device_os;") }
    }
}
