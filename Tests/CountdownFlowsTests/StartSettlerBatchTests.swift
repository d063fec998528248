import CountdownDomain
@testable import CountdownFlows
import CountdownStore
import Foundation
import Postgres
import Telemetry
import Testing
import TestSupport

/// The settler writes a batch once `fill` outcomes wait or `gather` passed, whichever comes first; the settle
/// statement finds rows by key with hash and merge joins off for itself only.
@Suite struct StartSettlerBatchTests {
    /// A database with stream `s` and `rows` ledger rows being sent.
    static func withLedger(rows: Int, _ body: (PostgresClient) async throws -> Void) async throws {
        try await MigratedDatabase.with(prefix: "settler") { client in
            try await client.transaction { c in
                try c.execute("INSERT INTO streams (id, title, planned_start_at) VALUES ('s', 'S', now() + interval '30 minutes')")
                try c.execute("""
                    INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status, claimed_until, claimed_by)
                    SELECT 's', 'u' || i, 'd' || i, 'sending', now() + interval '1 minute', 'me' FROM generate_series(1, $1::int) i
                    """, [rows])
            }
            try await body(client)
        }
    }

    static func results(_ range: ClosedRange<Int>) -> [StartSettler.Result] {
        range.map {
            StartSettler.Result(StartLedger.Settlement(.init(Self.key($0), generation: 1), owner: "me", status: .sent, reason: nil,
                                                       name: "projects/p/messages/\($0)", tokenHash: TokenHash.of(fcm: "fcm-\($0)", pts: "pts-\($0)")))
        }
    }

    static func key(_ i: Int) -> StartLedger.Key { StartLedger.Key(stream: "s", user: "u\(i)", device: "d\(i)") }

    static func sent(_ client: PostgresClient) async throws -> Int {
        try await client.query("""
            SELECT count(*) AS n FROM countdown_start_ledger
            WHERE status = 'sent' AND claimed_until IS NULL AND message_name = 'projects/p/messages/' || substr(user_id, 2)
              AND token_hash = md5('fcm-' || substr(user_id, 2) || ':pts-' || substr(user_id, 2))
            """).first?.decode("n", as: Int.self) ?? -1
    }

    static func logger() -> Logger { Logger(level: .error, sink: CapturingLogSink()) }

    /// A settler writing to `client`, running until the test's database goes.
    static func running(_ client: PostgresClient, batch: Int = 500, fill: Int = 200, gather: Duration = .milliseconds(20)) -> StartSettler {
        let settler = StartSettler(store: StoreClient(client), logger: logger(), batch: batch, fill: fill, gather: gather)
        RunningSettlers.start(settler, on: client)
        return settler
    }

    @Test func aBatchIsWrittenAsSoonAsItFillsWithoutWaitingForTheGatherTime() async throws {
        try await Self.withLedger(rows: 200) { client in
            // A gather time no test waits for: only the fill can start the write.
            let settler = Self.running(client, batch: 500, fill: 200, gather: .seconds(3600))
            let ticket = await settler.openTicket()
            await settler.add(Self.results(1...150), to: ticket)
            await settler.add(Self.results(151...200), to: ticket)
            let deadline = ContinuousClock.now + .seconds(60)
            while await settler.unsettled > 0 {
                guard ContinuousClock.now < deadline else {
                    Issue.record("200 outcomes were not written within a minute")
                    return
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            try await settler.settle(ticket)
            #expect(try await Self.sent(client) == 200)
        }
    }

    /// A batch that does not fill is written after the gather time; a backlog larger than a batch goes out in
    /// several. Every outcome is written and its row let go.
    @Test(arguments: [(rows: 3, batch: 500, fill: 200), (rows: 450, batch: 100, fill: 50)])
    func outcomesAreWrittenAfterTheGatherTimeInBatchesOfAtMostTheBatchSize(_ shape: (rows: Int, batch: Int, fill: Int)) async throws {
        try await Self.withLedger(rows: shape.rows) { client in
            let settler = Self.running(client, batch: shape.batch, fill: shape.fill)
            let ticket = await settler.openTicket()
            await settler.hold((1...shape.rows).map(Self.key))
            await settler.add(Self.results(1...shape.rows), to: ticket)
            try await settler.settle(ticket)
            #expect(await settler.unsettled == 0)
            #expect(await settler.heldRows.isEmpty)
            #expect(try await Self.sent(client) == shape.rows)
        }
    }

    /// An outcome the ledger refuses (its row taken over by another worker meanwhile) is counted and logged, not
    /// written again, and lets its row go; the batch's other outcomes are written.
    @Test func aRefusedOutcomeIsCountedAndNotWrittenAgain() async throws {
        try await Self.withLedger(rows: 2) { client in
            _ = try await client.execute("UPDATE countdown_start_ledger SET claimed_by = 'successor' WHERE device_id = 'd1'")
            let metrics = CountingFlowMetrics()
            let sink = CapturingLogSink()
            let settler = StartSettler(store: StoreClient(client), logger: Logger(level: .warn, sink: sink), metrics: metrics)
            RunningSettlers.start(settler, on: client)
            let ticket = await settler.openTicket()
            await settler.hold([Self.key(1), Self.key(2)])
            await settler.add(Self.results(1...2), to: ticket)
            try await settler.settle(ticket)
            #expect(metrics.refusedStartOutcomes.value == 1)
            #expect(sink.lines.contains { $0.contains("start outcome refused by the ledger") && $0.contains("\"device\":\"d1\"") })
            #expect(await settler.unsettled == 0)
            #expect(await settler.heldRows.isEmpty)
            let rows = try await client.query("SELECT device_id || ' ' || status || ' ' || claimed_by AS row FROM countdown_start_ledger ORDER BY 1")
                .map { try $0.decode("row", as: String.self) }
            #expect(rows == ["d1 sending successor", "d2 sent me"])
        }
    }

    @Test func theSettleStatementTurnsHashAndMergeJoinsOffForItselfOnly() async throws {
        try await Self.withLedger(rows: 2) { client in
            let settings = try await client.transaction { c -> [String] in
                // The caller's own setting in the transaction is put back as it was.
                try c.execute("SET LOCAL enable_mergejoin = off")
                try StartLedger.settle(Self.results(1...2).map(\.settlement), on: c)
                return try c.query("SELECT current_setting('enable_hashjoin') AS h, current_setting('enable_mergejoin') AS m").map {
                    "\(try $0.decode("h", as: String.self)) \(try $0.decode("m", as: String.self))"
                }
            }
            #expect(settings == ["on off"])
            #expect(try await Self.sent(client) == 2)
            let after = try await client.query("SELECT current_setting('enable_hashjoin') AS h, current_setting('enable_mergejoin') AS m")
            #expect(try after.first?.decode("h", as: String.self) == "on" && after.first?.decode("m", as: String.self) == "on")
        }
    }
}
