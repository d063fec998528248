import BlockingIO
import CountdownDomain
@testable import CountdownFlows
import CountdownStore
import Foundation
import Postgres
import PushPayloads
import Telemetry
import Testing
import TestSupport

/// Outcomes of pushes that went out survive a PostgreSQL outage in memory, claims last while their worker lives,
/// a dead worker's claims are taken over, and large fan-outs go page by page.
@Suite struct StartSettlementTests {
    /// A fleet view the test controls.
    struct Fleet: WorkerLiveness {
        let workerID: String?
        let dead: Set<String>

        func classify(_ owners: [String]) async -> (dead: [String], alive: [String]) {
            (owners.filter { dead.contains($0) }, owners.filter { !dead.contains($0) })
        }
    }

    /// Accepts every push; `before` runs (once) before the first push is answered, and no push is answered before
    /// it finished.
    final class Gateway: OnePushGateway {
        let sent = Locked([String]())
        let before: Locked<(@Sendable () async -> Void)?>
        let ran = AsyncGate()

        init(before: (@Sendable () async -> Void)? = nil) {
            self.before = Locked(before)
            if before == nil { ran.open() }
        }

        func send(_ push: OutgoingPush, kind: PushKind) async -> Delivery {
            if let hook = before.withLock({ hook in defer { hook = nil }; return hook }) {
                await hook()
                ran.open()
            }
            await ran.pass()
            guard case .liveActivity(_, let fcm, _) = push else { return .rejected(reason: "unexpected") }
            sent.withLock { $0.append(fcm) }
            return .accepted(name: "projects/p/messages/\(fcm)")
        }
    }

    static func context(_ client: PostgresClient, _ gateway: Gateway, worker: String?, dead: Set<String> = [], claimSeconds: Int = 30,
                        page: Int = 1000) throws -> FlowContext {
        FlowContext(database: client, push: gateway, payloads: try PushPayloadBuilder(), settings: FlowSettings(startLeadSeconds: 3600),
                    transport: .fcm, metrics: CountingFlowMetrics(), logger: Logger(level: .error, sink: CapturingLogSink()),
                    claimSeconds: claimSeconds, liveness: Fleet(workerID: worker, dead: dead), startPageSize: page)
    }

    /// A database with stream `s` and `devices` eligible devices of its creator.
    static func withStream(devices: Int, _ body: (TestDatabase, PostgresClient) async throws -> Void) async throws {
        try await MigratedDatabase.with(prefix: "settle") { database, client in
            try await client.transaction { c in
                try c.execute("INSERT INTO users (id, display_name) VALUES ('u', 'User')")
                try c.execute("""
                    INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token)
                    SELECT 'd' || i, 'u', 'ios', 'fcm-' || i, 'pts-' || i FROM generate_series(1, $1::int) i
                    """, [devices])
                try c.execute("INSERT INTO streams (id, title, planned_start_at, status) VALUES ('s', 'S', now() + interval '30 minutes', 'scheduled')")
                try c.execute("INSERT INTO stream_participants (stream_id, user_id, role) VALUES ('s', 'u', 'creator')")
            }
            try await body(database, client)
        }
    }

    static func ledger(_ client: PostgresClient) async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for row in try await client.query("SELECT status, count(*) AS n FROM countdown_start_ledger GROUP BY status") {
            counts[try row.decode("status")] = try row.decode("n", as: Int.self)
        }
        return counts
    }

    static func waitUntilSettled(_ context: FlowContext) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while await context.settler.unsettled > 0 {
            guard ContinuousClock.now < deadline else { throw CancellationError() }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// A fan-out of several streams pages through all of them: a full page taken in key order (here the first two
    /// streams' rows) says nothing about the later streams, which must be asked on the next page too.
    @Test func aFanOutOfSeveralStreamsSendsEveryStreamPageByPage() async throws {
        try await MigratedDatabase.with(prefix: "settle_streams") { _, client in
            try await client.transaction { c in
                try c.execute("INSERT INTO users (id, display_name) SELECT 'u' || k, 'User' FROM generate_series(1, 4) k")
                try c.execute("""
                    INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token)
                    SELECT 'd' || k || '_' || i, 'u' || k, 'ios', 'fcm-' || k || '_' || i, 'pts-' || k || '_' || i
                    FROM generate_series(1, 4) k, generate_series(1, 3) i
                    """)
                try c.execute("""
                    INSERT INTO streams (id, title, planned_start_at, status)
                    SELECT 's' || k, 'S', now() + interval '30 minutes', 'scheduled' FROM generate_series(1, 4) k
                    """)
                try c.execute("INSERT INTO stream_participants (stream_id, user_id, role) SELECT 's' || k, 'u' || k, 'creator' FROM generate_series(1, 4) k")
            }
            let gateway = Gateway()
            let context = try Self.context(client, gateway, worker: "worker-a", page: 4)
            _ = try await JobHandler(context: context).handleStarts(["s1", "s2", "s3", "s4"])
            #expect(Set(gateway.sent.value).count == 12 && gateway.sent.value.count == 12, "\(gateway.sent.value.sorted())")
            #expect(try await Self.ledger(client) == ["sent": 12])
        }
    }

    @Test func anOutageDuringSettlementRepeatsNothing() async throws {
        try await Self.withStream(devices: 6) { database, client in
            let name = database.name
            let outage = AsyncGate()
            // The first push takes PostgreSQL away from this database (connections refused and cut) until the test
            // brings it back: every outcome must be written after the outage.
            let gateway = Gateway(before: {
                try? await database.administer { c in
                    try c.execute("ALTER DATABASE \(try c.quoteIdentifier(name)) WITH ALLOW_CONNECTIONS false")
                    try c.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", [name])
                }
                outage.open()
            })
            // Claims of 0 s: expired at once, so only the owner's liveness keeps them.
            let first = try Self.context(client, gateway, worker: "worker-a", claimSeconds: 0)
            await #expect(throws: (any Error).self, "the job is postponed while its outcomes wait") {
                try await JobHandler(context: first).handle(.start(stream: "s"))
            }
            await outage.pass()
            #expect(gateway.sent.value.count == 6)
            #expect(await first.settler.unsettled > 0, "the outcomes are kept in memory")
            #expect(await first.settler.heldRows.count == 6, "and their rows held (their claims are kept alive)")
            try await database.administer { c in
                try c.execute("ALTER DATABASE \(try c.quoteIdentifier(name)) WITH ALLOW_CONNECTIONS true")
            }
            // Another worker runs the job again: worker-a lives, so its expired claims are not taken.
            let second = try Self.context(client, gateway, worker: "worker-b", claimSeconds: 0)
            let retried = try await JobHandler(context: second).handle(.start(stream: "s"))
            if await first.settler.unsettled > 0 {
                #expect(retried == .retry(after: .seconds(0), reason: "rows_claimed_elsewhere"), "worker-a's rows are still open")
            }
            try await Self.waitUntilSettled(first)
            #expect(await first.settler.heldRows.isEmpty, "rows are let go once their outcome is written")
            #expect(try await Self.ledger(client) == ["sent": 6])
            #expect(gateway.sent.value.count == 6, "no device got a second start")
            let outcome = try await JobHandler(context: second).handle(.start(stream: "s"))
            #expect(outcome == .done(detail: "sent 0 of 0 claimed, 6 devices considered"))
        }
    }

    @Test func aDeadOwnersClaimsAreTakenOverAtOnceALivingOnesAreKept() async throws {
        try await Self.withStream(devices: 4) { _, client in
            let gateway = Gateway()
            // A first fan-out records the rows; then they are made to look claimed by two other workers.
            let setup = try Self.context(client, gateway, worker: "setup")
            _ = try await JobHandler(context: setup).handle(.start(stream: "s"))
            try await client.execute("""
                UPDATE countdown_start_ledger SET status = 'sending', claimed_until = now() + interval '1 hour',
                    claimed_by = CASE WHEN device_id IN ('d1', 'd2') THEN 'gone' ELSE 'slow' END
                """)
            let survivor = try Self.context(client, gateway, worker: "survivor", dead: ["gone"])
            let outcome = try await JobHandler(context: survivor).handle(.start(stream: "s"))
            #expect(outcome == .retry(after: .seconds(30), reason: "rows_claimed_elsewhere"))
            #expect(gateway.sent.value.count == 6, "the dead worker's two rows were sent again, the living one's were not")
            #expect(try await Self.ledger(client) == ["sent": 2, "sending": 2])
            let held: [String] = try await client.query("SELECT device_id FROM countdown_start_ledger WHERE status = 'sending' ORDER BY 1")
                .map { try $0.decode("device_id") }
            #expect(held == ["d3", "d4"])
        }
    }

    @Test func aLargeFanOutGoesPageByPageAndExtendsItsClaims() async throws {
        try await Self.withStream(devices: 7) { _, client in
            let gateway = Gateway()
            let context = try Self.context(client, gateway, worker: "pager", page: 3)
            let outcome = try await JobHandler(context: context).handle(.start(stream: "s"))
            #expect(outcome == .done(detail: "sent 7 of 7 claimed, 7 devices considered"))
            #expect(Set(gateway.sent.value).count == 7 && gateway.sent.value.count == 7)
            #expect(try await Self.ledger(client) == ["sent": 7])
            let done = try await client.query("SELECT 1 FROM countdown_stream_progress WHERE stream_id = 's' AND start_done_for IS NOT NULL")
            #expect(done.count == 1)

            // d1 is held (being sent); d2 and d5 were claimed by this worker in a transaction that failed, d5's claim
            // not yet expired; d3 is another worker's; d4 is this worker's but not named for release.
            try await client.execute("""
                UPDATE countdown_start_ledger SET status = 'sending',
                    claimed_until = now() + CASE WHEN device_id = 'd5' THEN interval '30 seconds' ELSE interval '-1 second' END,
                    claimed_by = CASE WHEN device_id = 'd3' THEN 'other' ELSE 'pager' END
                WHERE device_id IN ('d1', 'd2', 'd3', 'd4', 'd5')
                """)
            let row = { (device: String) in StartLedger.Key(stream: "s", user: "u", device: device) }
            let (held, releasing) = ([row("d1")], [row("d2"), row("d3"), row("d5")])
            let kept = try await client.transaction {
                try StartLedger.keepClaims(owner: "pager", held: held, releasing: releasing, seconds: 60, on: $0)
            }
            #expect(kept.extended == 1 && kept.released == 1)
            #expect(kept.waiting == [row("d5")], "released once its claim expires")
            let rows: [String] = try await client.query("""
                SELECT device_id || '=' || status || coalesce(':' || claimed_by, '') || CASE WHEN claimed_until > now() + interval '50 seconds'
                       THEN ' extended' ELSE '' END AS row
                FROM countdown_start_ledger WHERE device_id IN ('d1', 'd2', 'd3', 'd4', 'd5') ORDER BY 1
                """).map { try $0.decode("row") }
            #expect(rows == ["d1=sending:pager extended", "d2=pending", "d3=sending:other", "d4=sending:pager", "d5=sending:pager"])
        }
    }
}
