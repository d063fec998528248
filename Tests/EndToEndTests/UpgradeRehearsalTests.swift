import Foundation
import Testing
import TestSupport

/// scripts/rehearse-upgrade: a rolling upgrade across a schema migration, rehearsed on this machine.
///
/// The order is the one Kubernetes follows with the manifests in deploy/kubernetes (docs/upgrading.md): old workers
/// run on the old schema; a new pod's `migrate` init container applies the new versions while the old workers keep
/// working; new workers start and become ready; old workers get SIGTERM one at a time. Start bursts fall before,
/// during and after each step. At the end the start pushes the fake FCM accepted are compared with what PostgreSQL
/// says should have been sent: nothing lost, nothing duplicated. A new worker started before the migration must
/// report not ready (`/readyz` 503 naming the schema) and claim nothing (its schema gate holds the dispatcher, relay
/// and reconciler back). Then the rollback: the previous release's workers start on the new schema (migrations are
/// forward-only, so a rollback changes only the image) and must become ready, the new workers get SIGTERM one at a
/// time, and two more bursts must be sent by the old release alone. The API and the console of each build go the
/// same way beside the workers: the old ones serve on the old schema and through the migration, the new ones on
/// the new schema, and the old ones again after the rollback (a build without the console is noted, not failed).
///
/// Runs only when `COUNTDOWN_OLD_BIN_DIR` names the older build (scripts/rehearse-upgrade builds it);
/// `COUNTDOWN_REHEARSE_STREAMS` streams per wave (60).
@Suite(.serialized, .enabled(if: UpgradeRehearsal.oldBinDirectory != nil, "scripts/rehearse-upgrade sets COUNTDOWN_OLD_BIN_DIR"))
struct UpgradeRehearsalTests {
    @Test func rollingUpgradeAcrossAMigrationAndBack() async throws {
        let old = try #require(UpgradeRehearsal.oldBinDirectory)
        let streams = ProcessInfo.processInfo.environment["COUNTDOWN_REHEARSE_STREAMS"].flatMap(Int.init) ?? 60
        let rehearsal = try await UpgradeRehearsal(old: old)
        do {
            try await rehearse(rehearsal, old: old, new: TestEnvironment.systemBinDirectory, streams: streams)
        } catch {
            rehearsal.check(false, "harness: \(error)")
        }
        let outcome: (passed: Bool, failures: [String])
        do {
            outcome = try await rehearsal.finish()
        } catch {
            outcome = (false, ["harness: \(error)"])
        }
        await rehearsal.system.stop()
        #expect(outcome.passed, "\(outcome.failures.joined(separator: "; "))")
    }

    private func rehearse(_ r: UpgradeRehearsal, old: URL, new: URL, streams: Int) async throws {
        let system = r.system
        let oldVersions = try await r.schemaVersions()
        r.log("old build \(await r.version(of: old)): schema \(oldVersions)")
        try await system.startWorkers(2)
        let oldServers = try await r.startServers(of: old, label: "old", "the previous release on its schema")
        var due = try await r.seedWave(1, streams: streams, dueIn: 4)
        try await r.waitUntil(due + 1)

        // The new release: its worker started early (as a pod whose init container has not finished would be, or one
        // started by hand) must not report ready on the old schema.
        r.use(new)
        r.log("new build \(await r.version(of: new))")
        let early = try system.startWorker()
        try await waitUntil(timeout: .seconds(60), every: .milliseconds(100), "the early new worker to serve /readyz") {
            early.metricsAddress() != nil || !early.isRunning
        }
        let (status, body) = await early.readiness()
        r.check(status == 503 && body.contains("schema"),
                "a new worker on the old schema is not ready (\(status) \(body.trimmingCharacters(in: .whitespacesAndNewlines).prefix(160)))")
        try await waitUntil(timeout: .seconds(30), every: .milliseconds(100), "the early new worker to wait for the schema") {
            early.logLines().contains { $0["msg"] as? String == "waiting for the database schema before claiming jobs" }
        }
        let scrape = await early.metrics()
        let handled = scrape.filter { $0.key.hasPrefix("countdown_jobs_total") }.values.reduce(0, +)
        r.check(!scrape.isEmpty && handled == 0, "a new worker on the old schema claims nothing (\(Int(handled)) jobs)")
        early.terminate()
        r.check(await early.waitForExit(timeout: 20) == 0, "the early new worker stopped on SIGTERM with exit code 0")
        system.retire(early)

        // The migration (the new pod's init container) while old workers process wave 2.
        due = try await r.seedWave(2, streams: streams, dueIn: 3)
        try await r.waitUntil(due)
        let migrated = try await system.adminJSON(["migrate"]) as? [String: Any]
        let applied = migrated?["applied"] as? [Any] ?? []
        let newVersions = try await r.schemaVersions()
        r.note("migrated \(oldVersions.last ?? 0) → \(newVersions.last ?? 0) (applied \(applied)) while the old workers ran wave 2")
        r.check(!applied.isEmpty, "the new build applied at least one migration")
        r.check(system.workers.allSatisfy(\.isRunning), "old workers kept running across the migration")

        // New workers come up and become ready; then the old ones get SIGTERM one at a time.
        let oldWorkers = system.workers
        due = try await r.seedWave(3, streams: streams, dueIn: 4)
        let newWorkers = try await system.startWorkers(2)
        try await r.waitReady(newWorkers, timeout: 30, "the new workers to be ready")
        for server in oldServers { await r.checkServing(server, "the previous release on the new schema, mid-rollout") }
        let newServers = try await r.startServers(of: new, label: "new", "the new release on the new schema")
        for server in oldServers { await r.stopServer(server, "the previous release's pod replaced") }
        try await r.stopOneAtATime(oldWorkers) { "old worker \($0) stopped with exit code 0 (\($1.map(String.init) ?? "killed"))" }
        due = try await r.seedWave(4, streams: streams, dueIn: 3)
        try await r.waitQuiet(after: due, timeout: 90)
        r.check(await r.allReady(newWorkers), "the new workers are ready after the upgrade")

        // The rollback: the previous image again, on the schema the new release migrated to (nothing is undone).
        r.use(old)
        due = try await r.seedWave(5, streams: streams, dueIn: 4)
        let rolledBack = try await system.startWorkers(2)
        try await r.waitReady(rolledBack, timeout: 30, "the previous release's workers to be ready on the new schema")
        let rolledBackServers = try await r.startServers(of: old, label: "rollback", "the previous release again, on the new schema")
        for server in newServers { await r.stopServer(server, "the new release's pod replaced on the rollback") }
        r.check(true, "the previous release's workers are ready on schema \(try await r.schemaVersions().last ?? 0)")
        try await r.stopOneAtATime(newWorkers) { "new worker \($0) stopped with exit code 0 on the rollback (\($1.map(String.init) ?? "killed"))" }
        due = try await r.seedWave(6, streams: streams, dueIn: 3)
        try await r.waitQuiet(after: due, timeout: 90)
        let rolledBackReady = await r.allReady(rolledBack)
        r.check(rolledBack.allSatisfy(\.isRunning) && rolledBackReady, "the previous release's workers are running and ready at the end")
        r.check(try await system.queueStats().dead == 0, "no dead letters")
        for server in rolledBackServers { await r.stopServer(server, "the end") }
    }
}
