import Foundation
import Postgres
import Testing
import TestSupport

/// SPEC 12.1: after a SIGKILL, the starts sent twice are at most one per slot (`PUSH_CONCURRENCY`): an answered
/// push's outcome is recorded before its slot takes the next push, so what a kill repeats is exactly the pushes the
/// killed worker had open (sent, and not recorded yet), never more than its slots. `ReminderCrashTests` holds
/// reminders to the same.
///
/// One run at a small size in `scripts/test`; `COUNTDOWN_CRASH_RUNS=5 COUNTDOWN_CRASH_FULL=1` gives the
/// documentation's runs (docs/reliability.md, "Crash duplicates by kind"), one line per run on stdout.
@Suite struct CrashDuplicateTests {
    static let slots = 64
    static var runs: Int { ProcessInfo.processInfo.environment["COUNTDOWN_CRASH_RUNS"].flatMap(Int.init) ?? 1 }
    static var full: Bool { ProcessInfo.processInfo.environment["COUNTDOWN_CRASH_FULL"] == "1" }

    @Test func aWorkerKilledMidStartBurstRepeatsAtMostOneStartPerSlot() async throws {
        for run in 1...Self.runs { try await Self.startRun(run) }
    }

    /// Four streams whose guests' devices (one each) start together, one worker SIGKILLed once a quarter of the
    /// starts went out, a new one started. Large streams keep every slot busy (a fan-out sends a page of 1,000).
    static func startRun(_ run: Int) async throws {
        let devices = full ? 12000 : 3000
        // An hour's lead: the start window stays open however slow a loaded machine makes the burst.
        let system = try await CountdownSystem(settings: ["START_LEAD_SECONDS": "3600", "PUSH_CONCURRENCY": "\(slots)"])
        try await system.fault(["latencyMs": 40])
        try await system.db.transaction { connection in
            try connection.execute("INSERT INTO users (id, display_name) SELECT 'u' || i, 'User ' || i FROM generate_series(1, $1) i", [devices])
            try connection.execute("""
                INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token)
                SELECT 'd' || i, 'u' || i, 'ios', 'fcm-d' || i, md5('pts' || i) FROM generate_series(1, $1) i
                """, [devices])
            try connection.execute("""
                INSERT INTO streams (id, title, planned_start_at) SELECT 's' || k, 'Stream ' || k, now() + interval '3604 seconds'
                FROM generate_series(1, 4) k
                """)
            try connection.execute("""
                INSERT INTO stream_participants (stream_id, user_id, role) SELECT 's' || (1 + i % 4), 'u' || i, 'guest'
                FROM generate_series(1, $1) i
                """, [devices])
        }
        // Its own application name: after the kill, the test waits for its backends to finish what they were doing (a
        // COMMIT already sent still lands) before it reads which rows the killed worker left unrecorded.
        let doomedName = "countdown-doomed"
        let doomed = try system.startWorker(["DATABASE_URL": try system.database.url(applicationName: doomedName)])
        let owner = try await doomed.workerID()
        do {
            try await system.waitForPushes(timeout: .seconds(180), "the burst under way") { $0.events("start").count >= devices / 4 }
        } catch {
            print(doomed.log.split(separator: "\n").filter { $0.contains("warn") || $0.contains("error") }.suffix(30).joined(separator: "\n"))
            throw error
        }
        doomed.kill9()
        try await waitUntil(timeout: .seconds(60), "the killed worker's PostgreSQL backends gone") {
            try await system.backends(applicationName: doomedName) == 0
        }
        // What the service took from the killed worker (the fake records a send when its latency is over, whether or
        // not the sender is still there), and which of its rows it had not recorded.
        try await system.waitForEarlierSends()
        let acceptedBefore = try await system.pushes().events("start")
        let accepted = Set(acceptedBefore.compactMap(\.activityToken))
        let unrecorded = try await system.query("""
            SELECT d.push_to_start_token AS token FROM countdown_start_ledger l JOIN devices d ON d.device_id = l.device_id
            WHERE l.status = 'sending' AND l.claimed_by = $1
            """, [owner]).map { try $0.decode("token", as: String.self) }
        let open = unrecorded.filter(accepted.contains).count

        let successor = try system.startWorker()
        let starts: [RecordedPush]
        do {
            starts = try await system.waitForPushes(timeout: .seconds(180), "every start sent") {
                Set($0.events("start").compactMap(\.activityToken)).count == devices
            }.events("start")
        } catch {
            let ledger = try await system.query("""
                SELECT concat_ws(' ', stream_id, status, coalesce(claimed_by, '-'), coalesce(reason, '-'), count(*)) AS line
                FROM countdown_start_ledger GROUP BY stream_id, status, claimed_by, reason ORDER BY 1
                """)
            print("ledger: \(try ledger.map { try $0.decode("line", as: String.self) })")
            print(successor.log.split(separator: "\n").suffix(40).joined(separator: "\n"))
            throw error
        }
        let duplicates = starts.count - devices
        let sentTwice = Dictionary(grouping: starts.compactMap(\.activityToken), by: { $0 }).filter { $0.value.count > 1 }
        print("crash duplicates, starts, run \(run): \(devices) starts, killed after \(acceptedBefore.count) accepted; "
              + "\(unrecorded.count) rows left sending, \(open) of them accepted (requests open); \(duplicates) duplicates")
        // Every request open at the kill is repeated; a request of the killed worker still in flight when the test read
        // the fake's record (accepted a moment later) is repeated too, so the repeats lie between the two counts, and
        // only rows the killed worker left sending are repeated, each once.
        #expect(open <= duplicates && duplicates <= unrecorded.count,
                "repeated the requests the killed worker had open: \(open) accepted, \(unrecorded.count) left sending, \(duplicates) repeated")
        #expect(Set(sentTwice.keys).isSubset(of: Set(unrecorded)) && sentTwice.values.allSatisfy { $0.count == 2 },
                "only the killed worker's open rows are repeated, once: \(sentTwice.filter { !unrecorded.contains($0.key) }.count) others")
        #expect(duplicates <= slots, "at most one open request per slot (PUSH_CONCURRENCY \(slots)), got \(duplicates)")
        await system.stop()
    }
}
