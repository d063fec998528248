import CountdownDomain
import CountdownStore
import Postgres
import Testing

/// An outcome lands only on the claim it answers (`StartLedger.settle`): its sender still holds the row (`sending`,
/// `claimed_by`) for the generation it claimed. A late outcome never overwrites what a successor did.
@Suite struct StartLedgerSettleTests {
    static let key = StartLedger.Key(stream: "s", user: "u", device: "d")

    /// A stream with one pending ledger row.
    static func withPendingRow(_ body: (PostgresClient) async throws -> Void) async throws {
        try await StoreDatabase.with(prefix: "ledger_settle") { client in
            try await client.seed("""
                INSERT INTO streams (id, title, planned_start_at) VALUES ('s', 'S', now() + interval '1 hour');
                INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status) VALUES ('s', 'u', 'd', 'pending');
                """)
            try await body(client)
        }
    }

    /// `owner` claims the row, the owners in `dead` declared dead.
    static func claim(_ client: PostgresClient, by owner: String, dead: [String] = []) async throws -> StartLedger.Claim {
        let claims = try await client.transaction {
            try StartLedger.claim(["s"], scope: .stream, seconds: 60, owner: owner, owners: (dead, []), on: $0)
        }
        try #require(claims.count == 1, "\(owner) claims the row")
        return claims[0]
    }

    static func settle(_ client: PostgresClient, _ settlements: [StartLedger.Settlement]) async throws -> [StartLedger.Refused] {
        try await client.transaction { try StartLedger.settle(settlements, on: $0) }
    }

    static func row(_ client: PostgresClient) async throws -> String {
        try await client.lines("""
            SELECT concat_ws(' ', status, coalesce(reason, '-'), claimed_by, 'generation', generation) FROM countdown_start_ledger
            """).joined()
    }

    @Test func aLateOutcomeFromAWorkerDeclaredDeadDoesNotOverwriteItsSuccessorsRow() async throws {
        try await Self.withPendingRow { client in
            let first = try await Self.claim(client, by: "w1")
            // w1's heartbeat is gone: w2 takes the row over and pushes again.
            let second = try await Self.claim(client, by: "w2", dead: ["w1"])
            #expect(second == first, "the same row and generation")

            let late = try await Self.settle(client, [.init(first, owner: "w1", status: .failed, reason: "rejected:400")])
            #expect(late.map(\.error.code) == [.refused])
            #expect(try await Self.row(client) == "sending - w2 generation 1", "w2's claim stands")

            #expect(try await Self.settle(client, [.init(second, owner: "w2", status: .sent, reason: nil)]).isEmpty)
            #expect(try await Self.row(client) == "sent - w2 generation 1")

            // Later still, w1's retry outcome must not open the sent row again.
            let later = try await Self.settle(client, [.init(first, owner: "w1", status: .pending, reason: "retry:timeout")])
            #expect(later.count == 1)
            #expect(try await Self.row(client) == "sent - w2 generation 1")
        }
    }

    @Test func aLateOutcomeOfAnEarlierGenerationDoesNotOverwriteTheReopenedRow() async throws {
        try await Self.withPendingRow { client in
            // w1 claims the first activity's start and goes silent; w2 takes over and its push is accepted.
            let firstGeneration = try await Self.claim(client, by: "w1")
            let takenOver = try await Self.claim(client, by: "w2", dead: ["w1"])
            #expect(try await Self.settle(client, [.init(takenOver, owner: "w2", status: .sent, reason: nil)]).isEmpty)
            // The stream moves 10 hours later: that activity ends before it, the row opens for the next one.
            try await client.seed("""
                UPDATE countdown_start_ledger SET sent_at = now() - interval '1 minute';
                UPDATE streams SET planned_start_at = now() + interval '10 hours';
                """)
            let reopened = try await client.transaction { try StartLedger.reopenOutlived(["s"], lifetimeSeconds: 8 * 3600, on: $0) }
            #expect(reopened.count == 1)
            // w1 is back and claims the second generation.
            let secondGeneration = try await Self.claim(client, by: "w1")
            #expect(secondGeneration.generation == 2 && firstGeneration.generation == 1)

            // The first generation's outcome from w1 arrives only now: same owner, same `sending` state, older generation.
            let late = try await Self.settle(client, [.init(firstGeneration, owner: "w1", status: .failed, reason: "rejected:400")])
            #expect(late.map(\.error.code) == [.refused])
            #expect(try await Self.row(client) == "sending - w1 generation 2")

            #expect(try await Self.settle(client, [.init(secondGeneration, owner: "w1", status: .sent, reason: nil)]).isEmpty)
            #expect(try await Self.row(client) == "sent - w1 generation 2")
        }
    }

    @Test func anOutcomeTheTableDoesNotAllowIsRefusedAndTheOthersAreWritten() async throws {
        try await StoreDatabase.with(prefix: "ledger_settle") { client in
            try await client.seed("""
                INSERT INTO streams (id, title, planned_start_at) VALUES ('s', 'S', now() + interval '1 hour');
                INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status, claimed_by, claimed_until) VALUES
                    ('s', 'u', 'd1', 'sending', 'w1', now() + interval '1 minute'),
                    ('s', 'u', 'd2', 'sending', 'w1', now() + interval '1 minute');
                """)
            let claim = { (device: String) in StartLedger.Claim(.init(stream: "s", user: "u", device: device), generation: 1) }
            let refused = try await Self.settle(client, [
                .init(claim("d1"), owner: "w1", status: .assumedSent, reason: "restored"),
                .init(claim("d2"), owner: "w1", status: .sent, reason: nil),
            ])
            #expect(refused.map(\.settlement.key.device) == ["d1"])
            #expect(try await client.lines("SELECT device_id || ' ' || status FROM countdown_start_ledger ORDER BY 1") == ["d1 sending", "d2 sent"])
        }
    }

    /// The restore guard records rows as sent without a push: a new row and a pending one become `assumed_sent`, a
    /// sent row stays; no claim or fan-out takes such a row again.
    @Test func anAssumedSentRowIsNeverClaimed() async throws {
        try await StoreDatabase.with(prefix: "ledger_settle") { client in
            try await client.seed("""
                INSERT INTO streams (id, title, planned_start_at) VALUES ('s', 'S', now() + interval '1 hour');
                INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status) VALUES ('s', 'u', 'd1', 'pending'), ('s', 'u', 'd2', 'sent');
                """)
            let keys = ["d1", "d2", "d3"].map { StartLedger.Key(stream: "s", user: "u", device: $0) }
            let written = try await client.transaction { try StartLedger.assumeSent(keys, on: $0) }
            #expect(written == 2)
            let claimed = try await client.transaction {
                try StartLedger.claim(["s"], scope: .stream, seconds: 60, owner: "w1", owners: (["w2"], []), on: $0)
            }
            #expect(claimed.isEmpty)
            #expect(try await client.lines("SELECT concat_ws(' ', device_id, status, reason) FROM countdown_start_ledger ORDER BY 1")
                    == ["d1 assumed_sent restored", "d2 sent", "d3 assumed_sent restored"])
        }
    }
}
