import CountdownDomain
import CountdownStore
import Postgres
import Testing

/// One read before a fan-out's transaction names the other workers holding its streams' rows and the streams that
/// have rows at all; `recordTargets` skips reading the rows of streams seen without any, and a row written since
/// surfaces as the unique violation the fan-out already answers by running again with `racing`.
@Suite struct LedgerOwnersTests {
    @Test func namesOtherOwnersAndTheStreamsWithRows() async throws {
        try await MigratedDatabase.with(prefix: "ledgerowners") { client in
            _ = try await client.execute("""
                INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status, attempts, claimed_by, claimed_until)
                VALUES ('s1', 'u1', 'd1', 'sending', 1, 'w-other', now() + interval '1 minute'),
                       ('s1', 'u2', 'd2', 'sending', 1, 'w-me', now() + interval '1 minute'),
                       ('s1', 'u3', 'd3', 'sent', 1, 'w-gone', NULL),
                       ('s2', 'u1', 'd1', 'pending', 0, NULL, NULL),
                       ('s3', 'u1', 'd1', 'sending', 1, 'w-third', now() - interval '1 minute'),
                       ('s4', 'u1', 'd1', 'sending', 1, 'w-other', now() + interval '1 minute')
                """)
            let read = try await client.withConnection { connection in
                try StartLedger.ledgerOwners(["s1", "s2", "s3", "s5"], except: "w-me", on: connection)
            }
            #expect(read.owners == ["w-other", "w-third"], "holders of rows being sent, never this worker, nor settled rows")
            #expect(read.streamsWithRows == ["s1", "s2", "s3"], "s4 was not asked for, s5 has no rows")
            let none = try await client.withConnection { connection in
                try StartLedger.ledgerOwners(["s5"], except: nil, on: connection)
            }
            #expect(none.owners.isEmpty && none.streamsWithRows.isEmpty)
        }
    }

    @Test func aRowWrittenSinceTheReadFailsTheInsertOnItsKey() async throws {
        try await MigratedDatabase.with(prefix: "ledgerowners") { client in
            _ = try await client.execute("INSERT INTO streams (id, title, planned_start_at) VALUES ('s1', 'S', now() + interval '30 minutes')")
            let seen = try await client.withConnection { try StartLedger.ledgerOwners(["s1"], except: "w1", on: $0) }
            #expect(seen.streamsWithRows.isEmpty)
            // Another fan-out records u2's row after the read.
            _ = try await client.execute("""
                INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status, attempts, sent_at)
                VALUES ('s1', 'u2', 'd-u2', 'sent', 1, now())
                """)
            let claim = StartLedger.InsertClaim(owner: "w1", seconds: 60, limit: 10)
            do {
                _ = try await client.transaction { connection in
                    try StartLedger.recordTargets([LedgerClaimOnInsertTests.target("u1"), LedgerClaimOnInsertTests.target("u2")], claim: claim,
                                                       withoutRows: ["s1"], on: connection)
                }
                Issue.record("the insert of a row written since the read succeeded")
            } catch let error as StoreError {
                #expect(error.code == .raced && error.isTransient, "the unique violation comes out as a typed race: \(error)")
            }
            // Run again as the fan-out does after the violation: u2's row is left alone, u1 is recorded and claimed.
            let again = try await client.transaction { connection in
                try StartLedger.recordTargets([LedgerClaimOnInsertTests.target("u1"), LedgerClaimOnInsertTests.target("u2")], claim: claim, racing: true,
                                                   on: connection)
            }
            #expect(again.claimed.map(\.key.user) == ["u1"])
            let rows = try await client.query("SELECT user_id || '=' || status AS row FROM countdown_start_ledger ORDER BY 1")
                .map { try $0.decode("row", as: String.self) }
            #expect(rows == ["u1=sending", "u2=sent"])
        }
    }
}
