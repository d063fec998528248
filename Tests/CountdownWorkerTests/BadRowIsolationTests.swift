import CountdownDomain
@testable import CountdownMaintenance
import CountdownStore
@testable import CountdownWorker
import DelayQueue
import Foundation
import Postgres
import Telemetry
import Testing
import TestSupport

/// Rows a careless writer left (non-finite or absurd dates from before the schema guards) never stall the relay
/// or the reconciler: they are quarantined with their reason and every other stream is planned.
@Suite struct BadRowIsolationTests {
    struct Fixture {
        let database: TestDatabase
        let client: PostgresClient
        let queue = InMemoryDelayQueue()
        let planner = JobPlanner(settings: FlowSettings(startLeadSeconds: 3600))
        let metrics = WorkerMetrics()

        func relay(batchSize: Int = 100, lockTimeoutMilliseconds: Int = 0) -> OutboxRelay {
            var configuration = database.configuration
            configuration.setTimeouts(statementMilliseconds: 0, lockMilliseconds: lockTimeoutMilliseconds)
            return OutboxRelay(configuration: configuration, queue: queue, planner: planner, metrics: metrics,
                        logger: Logger(level: .error, sink: CapturingLogSink()), batchSize: batchSize)
        }

        func quarantine() async throws -> [QuarantineQueries.Entry] {
            try await client.withConnection { try QuarantineQueries.list(on: $0) }
        }

        func hasJob(_ kind: CountdownJob.Kind, _ stream: String) async throws -> Bool {
            let id = CountdownJob.streamJobID(kind, stream: stream)
            return try await queue.jobs(ids: [id])[id] != nil
        }
    }

    /// Bad streams written before migration 6 (whose guard would refuse them now), then the schema brought up to date.
    static func withOldBadRows(_ body: (Fixture) async throws -> Void) async throws {
        try await TestDatabase.withFresh(prefix: "badrows") { database, client in
            _ = try await Migrator(migrations: Migration.all.filter { $0.version < 6 }).migrate(client)
            _ = try await client.withConnection { c in
                try c.execute("""
                    INSERT INTO streams (id, title, planned_start_at) VALUES
                      ('s-infinite', 'Forever', 'infinity'), ('s-good-1', 'One', now() + interval '2 hours'),
                      ('s-before-christ', 'Old', '0100-01-01 00:00:00+00 BC'), ('s-good-2', 'Two', now() + interval '3 hours')
                    """)
            }
            _ = try await Migrator().migrate(client)
            try await body(Fixture(database: database, client: client))
        }
    }

    @Test func theRelayQuarantinesUnreadableStreamsAndPlansTheRest() async throws {
        try await Self.withOldBadRows { fixture in
            let relay = fixture.relay()
            #expect(try await relay.relayOnce() == 4)
            #expect(try await fixture.hasJob(.start, "s-good-1"))
            #expect(try await fixture.hasJob(.start, "s-good-2"))
            let quarantined = try await fixture.quarantine()
            #expect(Set(quarantined.map(\.key)) == ["s-infinite", "s-before-christ"])
            #expect(quarantined.allSatisfy { $0.kind == "stream" && $0.foundBy == "relay" && $0.reason.contains("planned_start_at") })
            let left = try await fixture.client.withConnection { try $0.query("SELECT count(*) AS n FROM countdown_outbox").first?.decode("n", as: Int.self) }
            #expect(left == 0)

            // A stream written later goes out although the bad ones are still in the table.
            _ = try await fixture.client.withConnection { try $0.execute("INSERT INTO streams (id, title, planned_start_at) VALUES ('s-late', 'Late', now() + interval '2 hours')") }
            #expect(try await relay.relayOnce() == 1)
            #expect(try await fixture.hasJob(.start, "s-late"))

            // Fixed by its writer, a quarantined stream plans again and leaves the quarantine.
            _ = try await fixture.client.withConnection { try $0.execute("UPDATE streams SET planned_start_at = now() + interval '2 hours' WHERE id = 's-infinite'") }
            #expect(try await relay.relayOnce() == 1)
            #expect(try await fixture.hasJob(.start, "s-infinite"))
            #expect(try await fixture.quarantine().map(\.key) == ["s-before-christ"])
            #expect(fixture.metrics.registry.render().contains("countdown_quarantine_events_total{found_by=\"relay\"} 2"))
        }
    }

    @Test func theReconcilerQuarantinesWhatItCannotPlanAndRepairsTheRest() async throws {
        try await Self.withOldBadRows { fixture in
            _ = try await fixture.client.withConnection { try $0.execute("DELETE FROM countdown_outbox") }
            let reconciler = Reconciler(session: PostgresSession(configuration: fixture.database.configuration), queue: fixture.queue,
                                        planner: fixture.planner, batchSize: 2)
            let dry = try await reconciler.run(dryRun: true)
            #expect(dry.quarantined == ["s-infinite"])
            #expect(try await fixture.quarantine().isEmpty)
            let report = try await reconciler.run()
            #expect(report.quarantined == ["s-infinite"])
            #expect(try await fixture.hasJob(.start, "s-good-1"))
            #expect(try await fixture.hasJob(.start, "s-good-2"))
            #expect(try await fixture.quarantine().map { "\($0.key) \($0.foundBy)" } == ["s-infinite reconciler"])
        }
    }

    @Test func aStreamLockedByAnotherPlannerDelaysOnlyItsOwnRows() async throws {
        try await Self.withOldBadRows { fixture in
            let relay = fixture.relay(lockTimeoutMilliseconds: 200)
            #expect(try await relay.relayOnce() == 4)
            _ = try await fixture.client.withConnection {
                try $0.execute("""
                    INSERT INTO streams (id, title, planned_start_at) VALUES
                      ('s-held', 'Held', now() + interval '2 hours'), ('s-free', 'Free', now() + interval '2 hours')
                    """)
            }
            let other = PostgresSession(configuration: fixture.database.configuration)
            defer { other.close() }
            let relayed = try await other.transaction { transaction in
                try await transaction.run { try StreamStateQueries.lockStreams(["s-held"], on: $0) }
                return try await relay.relayOnce()
            }
            #expect(relayed == 1)
            #expect(try await fixture.hasJob(.start, "s-free"))
            #expect(try await !fixture.hasJob(.start, "s-held"))
            #expect(try await fixture.quarantine().map(\.key).sorted() == ["s-before-christ", "s-infinite"], "a held stream is not quarantined")
            #expect(try await relay.relayOnce() == 1)
            #expect(try await fixture.hasJob(.start, "s-held"))
        }
    }

    @Test func newNonFiniteOrAbsurdDatesAreRefused() async throws {
        try await Self.withOldBadRows { fixture in
            for date in ["infinity", "-infinity", "1970-01-01T00:00:00Z", "2999-01-01T00:00:00Z"] {
                let error = await #expect(throws: PostgresError.self) {
                    _ = try await fixture.client.withConnection { try $0.execute("UPDATE streams SET planned_start_at = $1::timestamptz WHERE id = 's-good-1'", [date]) }
                }
                #expect(error?.sqlState == "23514")
            }
        }
    }
}
