import CountdownDomain
import CountdownStore
import Postgres
import Testing

/// `recordTargets` writes the first rows of a page already claimed, exactly as `claim` would have left them,
/// and reports only the rows it claimed: never a row sent, in flight or failed before.
@Suite struct LedgerClaimOnInsertTests {
    static func target(_ user: String, skip: StartSkipReason? = nil, token: String = "pts") -> StartLedger.Target {
        StartLedger.Target(stream: "s1", candidate: DeviceCandidate(
            userID: user, role: "guest", deviceID: "d-\(user)", platform: "ios", fcmToken: "fcm-\(user)", pushToStartToken: token,
            locale: nil, liveStreamEnabled: true), skip: skip)
    }

    static func rows(_ client: PostgresClient) async throws -> [String: (status: String, owner: String?, attempts: Int, claimed: Bool)] {
        var rows: [String: (status: String, owner: String?, attempts: Int, claimed: Bool)] = [:]
        for row in try await client.query("""
            SELECT user_id, status, claimed_by, attempts, claimed_until > now() AS claimed FROM countdown_start_ledger WHERE stream_id = 's1'
            """) {
            rows[try row.decode("user_id")] = (try row.decode("status"), try row.decode("claimed_by"), try row.decode("attempts"),
                                                try row.decode("claimed", as: Bool?.self) ?? false)
        }
        return rows
    }

    @Test func theFirstEligibleRowsAreClaimedUpToTheLimit() async throws {
        try await MigratedDatabase.with(prefix: "claiminsert") { client in
            _ = try await client.execute("INSERT INTO streams (id, title, planned_start_at) VALUES ('s1', 'S', now() + interval '30 minutes')")
            let claimed = try await client.withConnection { connection in
                try StartLedger.recordTargets([Self.target("u3"), Self.target("u1", skip: .preferenceOff), Self.target("u2"), Self.target("u4")],
                                                   claim: .init(owner: "w1", seconds: 60, limit: 2), on: connection)
            }
            #expect(claimed.claimed.map(\.key.user) == ["u2", "u3"], "the first two eligible rows in key order")
            #expect(!claimed.foundEarlierRows)
            let rows = try await Self.rows(client)
            #expect(rows["u1"]?.status == "skipped" && rows["u1"]?.attempts == 0 && rows["u1"]?.owner == nil)
            #expect(rows["u2"]?.status == "sending" && rows["u2"]?.owner == "w1" && rows["u2"]?.attempts == 1 && rows["u2"]?.claimed == true)
            #expect(rows["u3"]?.status == "sending" && rows["u3"]?.owner == "w1" && rows["u3"]?.attempts == 1)
            #expect(rows["u4"]?.status == "pending" && rows["u4"]?.owner == nil && rows["u4"]?.attempts == 0)

            // The rest of the page comes from `claim`: the pending row, once.
            let rest = try await client.withConnection { connection in
                try StartLedger.claim(["s1"], scope: .stream, seconds: 60, owner: "w1", limit: 10, on: connection)
            }
            #expect(rest.map(\.key.user) == ["u4"])
        }
    }

    @Test(arguments: [false, true]) func rowsSentInFlightOrFailedAreNeverClaimedAgain(racing: Bool) async throws {
        try await MigratedDatabase.with(prefix: "claiminsert") { client in
            _ = try await client.execute("INSERT INTO streams (id, title, planned_start_at) VALUES ('s1', 'S', now() + interval '30 minutes')")
            _ = try await client.execute("""
                INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status, reason, token_hash, attempts, claimed_by, claimed_until)
                VALUES ('s1', 'u1', 'd-u1', 'sent', NULL, NULL, 1, NULL, NULL),
                       ('s1', 'u2', 'd-u2', 'sending', NULL, NULL, 1, 'w2', now() + interval '1 minute'),
                       ('s1', 'u3', 'd-u3', 'failed', 'rejected', NULL, 1, NULL, NULL),
                       ('s1', 'u4', 'd-u4', 'skipped', 'preference_off', NULL, 0, NULL, NULL),
                       ('s1', 'u5', 'd-u5', 'failed', 'dead_token:unregistered', $1, 1, NULL, NULL)
                """, [TokenHash.of(fcm: "fcm-u5", pts: "old")])
            let claimed = try await client.withConnection { connection in
                try StartLedger.recordTargets(["u1", "u2", "u3", "u4", "u5", "u6"].map { Self.target($0) },
                                                   claim: .init(owner: "w1", seconds: 60, limit: 10), racing: racing, on: connection)
            }
            // Sent, in flight (another worker's) and failed rows stay; a skipped row, and a dead-token failure whose
            // device has a new token, reopen and are claimed; a new device is recorded and claimed. The same whether
            // the rows are read first (plain insert) or resolved by `ON CONFLICT` after a race.
            #expect(claimed.claimed.map(\.key.user).sorted() == ["u4", "u5", "u6"])
            #expect(claimed.foundEarlierRows)
            let rows = try await Self.rows(client)
            #expect(rows["u1"]?.status == "sent")
            #expect(rows["u2"]?.status == "sending" && rows["u2"]?.owner == "w2")
            #expect(rows["u3"]?.status == "failed")
            #expect(rows["u4"]?.status == "sending" && rows["u4"]?.owner == "w1" && rows["u4"]?.attempts == 1)
            #expect(rows["u5"]?.status == "sending" && rows["u5"]?.owner == "w1" && rows["u5"]?.attempts == 2)
            #expect(rows["u6"]?.status == "sending" && rows["u6"]?.owner == "w1" && rows["u6"]?.attempts == 1)
        }
    }

    /// A skipped row is rewritten only when its reason or tokens change, and a dead-token failure stays failed
    /// for the same tokens or while the device is ineligible.
    @Test(arguments: [false, true]) func rowsThatWouldNotChangeAreLeftAlone(racing: Bool) async throws {
        try await MigratedDatabase.with(prefix: "claiminsert") { client in
            _ = try await client.execute("INSERT INTO streams (id, title, planned_start_at) VALUES ('s1', 'S', now() + interval '30 minutes')")
            _ = try await client.execute("""
                INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status, reason, token_hash, updated_at)
                VALUES ('s1', 'u1', 'd-u1', 'skipped', 'preference_off', $1, now() - interval '1 day'),
                       ('s1', 'u2', 'd-u2', 'skipped', 'preference_off', $2, now() - interval '1 day'),
                       ('s1', 'u3', 'd-u3', 'failed', 'dead_token:unregistered', $3, now() - interval '1 day'),
                       ('s1', 'u4', 'd-u4', 'failed', 'dead_token:unregistered', $1, now() - interval '1 day')
                """, [TokenHash.of(fcm: "fcm-u1", pts: "pts"), TokenHash.of(fcm: "fcm-u2", pts: "old"), TokenHash.of(fcm: "fcm-u3", pts: "pts")])
            let recorded = try await client.withConnection { connection in
                try StartLedger.recordTargets([Self.target("u1", skip: .preferenceOff), Self.target("u2", skip: .preferenceOff),
                                                    Self.target("u3"), Self.target("u4", skip: .preferenceOff)],
                                                   claim: .init(owner: "w1", seconds: 60, limit: 10), racing: racing, on: connection)
            }
            #expect(recorded.claimed.isEmpty)
            let touched = try await client.query("""
                SELECT user_id FROM countdown_start_ledger WHERE updated_at > now() - interval '1 hour' ORDER BY 1
                """).map { try $0.decode("user_id", as: String.self) }
            #expect(touched == ["u2"], "only the skipped row whose tokens changed is written")
            let rows = try await Self.rows(client)
            #expect(rows["u2"]?.status == "skipped" && rows["u3"]?.status == "failed" && rows["u4"]?.status == "failed")
        }
    }
}
