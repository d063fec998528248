import CountdownDomain
import CountdownMaintenance
import CountdownStore
@testable import CountdownWorker
import DelayQueue
import Foundation
import Postgres
import Telemetry
import Testing
import TestSupport

/// The pause state in PostgreSQL and its mirror in the queue (SPEC 10.3).
@Suite struct PauseMirrorTests {
    static func entry(_ kind: String, paused: Bool, reason: String = "") -> PauseQueries.Entry {
        PauseQueries.Entry(kind: kind, paused: paused, actor: "test", reason: reason, since: Date(timeIntervalSince1970: 0))
    }

    @Test func thePlanPausesWhatPostgreSQLHoldsPausedAndResumesWhatItResumed() {
        let truth = [Self.entry("start", paused: true, reason: "r1"), Self.entry("end", paused: true, reason: "r1"),
                     Self.entry("update", paused: true, reason: "r2"), Self.entry("reminder", paused: false), Self.entry("expire", paused: false)]
        let plan = PauseSync.plan(truth: truth, mirrored: ["update", "reminder", "backfill_user"])
        #expect(plan.pause == ["r1": ["end", "start"]])
        #expect(plan.resume == ["reminder"], "a kind PostgreSQL has no row for is left as Redis has it")
        #expect(PauseSync.plan(truth: truth, mirrored: ["start", "end", "update", "backfill_user"]).isEmpty)
    }

    @Test func theStoreKeepsWhoWhyAndSince() async throws {
        try await TestDatabase.withFresh(prefix: "pause") { _, client in
            _ = try await Migrator().migrate(client)
            try await client.withConnection { connection in
                let first = try PauseQueries.pause(kinds: ["start", "end"], actor: "alice", reason: "wrong project", on: connection)
                #expect(first.map(\.kind) == ["end", "start"] && first.allSatisfy { $0.paused && $0.actor == "alice" })
                _ = try connection.execute("UPDATE countdown_pause SET since = since - interval '1 hour'")
                let again = try PauseQueries.pause(kinds: ["start"], actor: "bob", reason: "still wrong", on: connection)
                #expect(again.first?.actor == "bob" && again.first?.reason == "still wrong")
                #expect(try #require(again.first).since < Date().addingTimeInterval(-3000), "a kind paused again keeps its since")
                #expect(try PauseQueries.resume(kinds: nil, actor: "carol", on: connection).map(\.kind) == ["end", "start"])
                #expect(try PauseQueries.paused(on: connection).isEmpty)
                #expect(try PauseQueries.resume(kinds: ["reminder"], actor: "carol", on: connection).map(\.paused) == [false],
                        "a resume is recorded also for a kind not known yet")
                #expect(try PauseQueries.all(on: connection).map(\.actor) == ["carol", "carol", "carol"])
            }
        }
    }

    /// Redis lost its pause keys: the mirror pauses again what PostgreSQL holds paused, never resuming on its own; a
    /// resume written only to PostgreSQL (as the console does) reaches Redis too.
    @Test func theMirrorRestoresALostPauseAndCarriesAResume() async throws {
        try await TestDatabase.withFresh(prefix: "pause") { _, client in
            _ = try await Migrator().migrate(client)
            let queue = InMemoryDelayQueue()
            let metrics = WorkerMetrics()
            let mirror = PauseMirror(database: StoreClient(client), queue: queue, metrics: metrics, logger: Logger(level: .error, sink: CapturingLogSink()))
            _ = try await client.withConnection { try PauseQueries.pause(kinds: ["start"], actor: "alice", reason: "incident", on: $0) }
            try await queue.pause(kinds: ["end"], reason: "made before PostgreSQL held pauses")
            try await mirror.syncOnce()
            #expect(try await queue.pausedKinds().map(\.kind) == ["end", "start"])
            #expect(try await queue.pausedKinds().first { $0.kind == "start" }?.reason == "incident")
            #expect(metrics.queuePaused.value(labels: "start") == 1 && metrics.queuePaused.value(labels: "end") == 0,
                    "the gauge is PostgreSQL's state")
            _ = try await client.withConnection { try PauseQueries.resume(kinds: ["start"], actor: "console", on: $0) }
            try await mirror.syncOnce()
            #expect(try await queue.pausedKinds().map(\.kind) == ["end"])
            #expect(metrics.queuePaused.value(labels: "start") == 0)
        }
    }

    /// A reconcile after Redis lost its data rebuilds the start job but mirrors the pause first: nothing is claimable.
    @Test func aReconcileMirrorsThePauseBeforeRebuildingJobs() async throws {
        try await TestDatabase.withFresh(prefix: "pause") { database, client in
            _ = try await Migrator().migrate(client)
            _ = try await client.withConnection { connection in
                try connection.execute("INSERT INTO streams (id, title, planned_start_at) VALUES ('s-1', 'One', now() + interval '30 minutes')")
                try connection.execute("DELETE FROM countdown_outbox")
                try PauseQueries.pause(kinds: ["start"], actor: "alice", reason: "", on: connection)
            }
            let queue = InMemoryDelayQueue()
            let session = PostgresSession(configuration: database.configuration)
            defer { session.close() }
            let report = try await Reconciler(session: session, queue: queue, planner: JobPlanner(settings: FlowSettings(startLeadSeconds: 3600))).run()
            #expect(report.added["start"] == 1)
            #expect(try await queue.pausedKinds().map(\.kind) == ["start"])
            #expect(try await queue.claim(max: 10, lease: .seconds(30)).jobs.filter { $0.kind == "start" }.isEmpty)
        }
    }
}
