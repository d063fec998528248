import CountdownDomain
import CountdownStore
import Postgres
import Testing

/// Every row a fan-out records can be settled on its own page (a HOT update: no index entry), even when one
/// transaction settles every row of the page: the pages keep room for a new version of each row (migration 12).
@Suite struct LedgerSettleInPlaceTests {
    /// Each row's page (the block of its `ctid`).
    static func pages(_ client: PostgresClient) async throws -> [String: Int] {
        var pages: [String: Int] = [:]
        for row in try await client.query("""
            SELECT user_id, (ctid::text::point)[0]::bigint AS page FROM countdown_start_ledger WHERE stream_id = 's1'
            """) {
            pages[try row.decode("user_id")] = try row.decode("page", as: Int.self)
        }
        return pages
    }

    @Test func aPageOfClaimedRowsIsSettledWithoutMovingARow() async throws {
        try await MigratedDatabase.with(prefix: "settleinplace") { client in
            _ = try await client.execute("INSERT INTO streams (id, title, planned_start_at) VALUES ('s1', 'S', now() + interval '30 minutes')")
            // Ids, tokens and message names as long as production's: 24-character ids, FCM-length message names.
            let users = (0..<400).map { String(format: "65f0%020d", $0) }
            let targets = users.map { user in
                StartLedger.Target(stream: "s1", candidate: DeviceCandidate(
                    userID: user, role: "guest", deviceID: "device-" + user, platform: "ios",
                    fcmToken: "fcm-" + String(repeating: "f", count: 150), pushToStartToken: "pts-" + String(repeating: "p", count: 150),
                    locale: "tr-TR", liveStreamEnabled: true), skip: nil)
            }
            let owner = "worker-" + String(repeating: "w", count: 40)
            let claimed = try await client.withConnection { connection in
                try StartLedger.recordTargets(targets, claim: .init(owner: owner, seconds: 60, limit: 1000), on: connection)
            }
            #expect(claimed.claimed.count == users.count)
            let before = try await Self.pages(client)
            #expect(Set(before.values).count > 1, "the rows fill several pages")
            let refused = try await client.transaction { connection in
                try StartLedger.settle(targets.map { target in
                    StartLedger.Settlement(.init(target.key, generation: 1), owner: owner, status: .sent,
                                           reason: nil, name: "projects/countdown-production-1234/messages/0:1776384000000000%31bd1c9631bd1c96",
                                           tokenHash: target.tokenHash)
                }, on: connection)
            }
            #expect(refused.isEmpty)
            let after = try await Self.pages(client)
            let moved = users.filter { before[$0] != after[$0] }
            #expect(moved.isEmpty, "\(moved.count) of \(users.count) rows moved to another page (not a HOT update)")
            let sent = try await client.query("SELECT count(*) AS n FROM countdown_start_ledger WHERE stream_id = 's1' AND status = 'sent'")
            #expect(try sent.first?.decode("n", as: Int.self) == users.count)
        }
    }
}
