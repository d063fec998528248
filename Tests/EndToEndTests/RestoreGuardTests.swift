import Foundation
import Redis
import Testing
import TestSupport

/// SPEC 12.4 and docs/runbooks.md's restore procedure, rehearsed: back up the database with pg_dump, run a burst
/// (starts and reminders go out), restore the backup into the same database name, and start a worker: it finds the
/// database behind the fleet's watermark and holds starts and reminders (readiness says why). Then
/// `countdown-admin restore-guard --since <backup> --yes` and the workers: not one start or reminder goes out a
/// second time, and what the guard gave up is counted.
@Suite(.serialized) struct RestoreGuardTests {
    @Test func aRestoredDatabaseStartsNothingTwice() async throws {
        // Windows of almost a minute, so the restore happens while every window is still open.
        let system = try await CountdownSystem(settings: ["START_LEAD_SECONDS": "55", "REMINDER_LEAD_SECONDS": "50"])
        let streams = 40
        try await system.burst(streams, startsIn: 60)
        try await system.execute("INSERT INTO stream_reminders (stream_id, user_id, status) SELECT 's' || i, 'u' || i, 'active' FROM generate_series(1, $1) i",
                                 [streams])
        let backup = (system.directory as NSString).appendingPathComponent("backup.dump")
        let bin = TestEnvironment.postgresBin
        let backupTime = try await system.databaseNow()
        // As a backup taken after two quiet minutes would be: its ledger clock two minutes old.
        try await system.execute("UPDATE countdown_ledger_clock SET newest = now() - interval '2 minutes'")
        _ = try await offThePool { try runCommand("\(bin)/pg_dump", ["-Fc", "-f", backup, system.database.url]) }

        // The burst: every start and reminder goes out once, and the fleet's watermark follows the ledger.
        _ = try await system.startWorkers(2)
        try await system.waitForPushes(timeout: .seconds(60), "every start and reminder") {
            Set($0.events("start").map(\.fcmToken)).count == streams && Set($0.events("notification").map(\.fcmToken)).count == streams
        }
        try await waitUntil(timeout: .seconds(30), "the ledger settled") {
            try await system.query("SELECT count(*) AS n FROM countdown_start_ledger WHERE status = 'sent'")[0].decode("n", as: Int.self) == streams
        }
        try await waitUntil(timeout: .seconds(30), "the watermark past the backup") {
            let mark = try await system.redis.command("GET", RedisArgument("{\(system.namespace)}:fleet:ledger-watermark")).string.flatMap(Double.init) ?? 0
            return mark / 1000 > backupTime
        }
        _ = await system.stopWorkers()
        let sent = try await system.pushes()

        // The restore: the same database name, from the dump.
        let name = system.database.name
        try await system.database.administer { connection in
            try connection.execute("DROP DATABASE \(try connection.quoteIdentifier(name)) WITH (FORCE)")
            try connection.execute("CREATE DATABASE \(try connection.quoteIdentifier(name))")
        }
        _ = try await offThePool { try runCommand("\(bin)/pg_restore", ["--no-owner", "-d", system.database.url, backup]) }
        #expect(try await system.query("SELECT count(*) AS n FROM countdown_start_ledger")[0].decode("n", as: Int.self) == 0, "the backup predates the burst")

        // A worker on the restored database holds starts and reminders and says so.
        let early = try system.startWorker()
        try await waitUntil(timeout: .seconds(30), "the worker to report the restore in its readiness") {
            let ready = await early.readiness()
            return ready.status == 503 && ready.body.contains("restore")
        }
        #expect(early.logLines().contains { ($0["msg"] as? String ?? "").contains("went back in time") }, "the log says why")
        try await Task.sleep(for: .seconds(3))
        #expect(try await system.pushes().count == sent.count, "nothing was sent while the fleet held")
        _ = await system.stopWorkers()

        // Refusals change nothing; then the guard.
        #expect(try await system.admin(["restore-guard", "--yes"]).status == 2)
        #expect(try await system.admin(["restore-guard", "--since", "2h"]).status == 2)
        #expect(try await system.admin(["restore-guard", "--since", "2099-01-01T00:00:00Z", "--yes"]).status == 2)
        #expect(try await system.query("SELECT count(*) AS n FROM countdown_start_ledger")[0].decode("n", as: Int.self) == 0)
        let since = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: backupTime - 1))
        let report = try await system.adminJSON(["restore-guard", "--since", since, "--yes"]) as? [String: Any] ?? [:]
        #expect(report["startsAssumed"] as? Int == streams && report["remindersAssumed"] as? Int == streams, "what the guard gave up: \(report)")

        // The workers again: until every window has closed, nothing goes out a second time.
        _ = try await system.startWorkers(2)
        let planned = try await system.plannedStart("s1")
        try await waitUntil(timeout: .seconds(90), every: .seconds(1), "every start window to close") { Date() > planned.addingTimeInterval(2) }
        let after = try await system.pushes()
        #expect(after.events("start").count == sent.events("start").count, "no second start")
        #expect(after.events("notification").count == sent.events("notification").count, "no second reminder")
        #expect(Set(after.events("start").map(\.fcmToken)).count == after.events("start").count, "each device started once")
        await system.stop()
    }
}
