import BlockingIO
import CountdownDomain
@testable import CountdownFlows
import Foundation
import Postgres
import PushPayloads
import Telemetry
import Testing
import TestSupport

/// A fan-out reads its streams' ledger rows and inserts the new ones with a plain `INSERT`; when another fan-out
/// records one of them in between, the insert fails on the key and the fan-out runs again resolving every row
/// with `ON CONFLICT`: the row the other one wrote is left alone, the rest go out once.
@Suite struct LedgerInsertRaceTests {
    @Test func aRowRecordedByAnotherFanoutInBetweenIsLeftToIt() async throws {
        try await MigratedDatabase.with(prefix: "race") { database, db in
            let gateway = StartBatchTests.RecordingGateway()
            let context = FlowContext(database: db, push: gateway, payloads: try PushPayloadBuilder(), settings: FlowSettings(startLeadSeconds: 3600),
                                      transport: .fcm, metrics: CountingFlowMetrics(), logger: Logger(level: .error, sink: CapturingLogSink()))
            let handler = JobHandler(context: context)
            try await db.transaction { c in
                try MigratedDatabase.seedStream("s", [("a", "creator", ["a1"]), ("b", "guest", ["b1"])], on: c)
            }
            // The other fan-out: b1's row, sent, in a transaction still open while this one reads and inserts.
            let other = PostgresClient(configuration: database.configuration, maxConnections: 1)
            defer { other.close() }
            let release = DispatchSemaphore(value: 0)
            let inserted = AsyncGate()
            let otherDone = Task {
                try await other.withConnection { c in
                    try c.execute("BEGIN")
                    try c.execute("""
                        INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status, attempts, sent_at)
                        VALUES ('s', 'b', 'b1', 'sent', 1, now())
                        """)
                    inserted.open()
                    release.wait()
                    try c.execute("COMMIT")
                }
            }
            await inserted.pass()
            let fanout = Task { try await handler.handleStarts(["s"]) }
            let name = database.name
            try await waitUntil("the fan-out's insert to wait for b1's key") {
                try await database.administer { connection in
                    !(try connection.query("""
                        SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO countdown_start_ledger%'
                        """, [name]).isEmpty)
                }
            }
            release.signal()
            try await otherDone.value
            let outcomes = try await fanout.value
            #expect(outcomes["s"] == .done(detail: "sent 1 of 1 claimed, 2 devices considered"))
            #expect(gateway.sent.value == ["fcm-a1"], "b1 was the other fan-out's to send")
            let ledger = try await db.query("SELECT device_id || '=' || status AS row FROM countdown_start_ledger ORDER BY 1")
                .map { try $0.decode("row", as: String.self) }
            #expect(ledger == ["a1=sent", "b1=sent"])
        }
    }
}
