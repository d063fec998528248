import CountdownStore
import Foundation
import Postgres
import Testing

/// `ReminderDeliveryQueries`: a chunk's range of users claimed in one row, the devices reached recorded in one row per
/// answered batch; a claim of a live worker holds its range, one of a dead worker (or released, or expired) is taken
/// over without repeating what its sends recorded.
@Suite struct ReminderDeliveryQueriesTests {
    static let planned = Date(timeIntervalSince1970: 1_900_000_000)

    static func devices(_ users: ClosedRange<Int>) -> [(device: String, user: String)] {
        users.map { (device: "d\($0)", user: "u\($0)") }
    }

    static func claim(_ users: ClosedRange<Int>, owner: String, dead: [String] = [], on client: PostgresClient) async throws
        -> ReminderDeliveryQueries.Claim {
        try await client.transaction { connection in
            try ReminderDeliveryQueries.claim("s", planned: planned, devices: devices(users), seconds: 60, owner: owner, deadOwners: dead,
                                            on: connection)
        }
    }

    @Test func aLiveClaimHoldsItsRangeAndADeadOnesSendsAreNotRepeated() async throws {
        try await StoreDatabase.with(prefix: "store_reminder_claims") { client in
            try await client.seed("""
                INSERT INTO users (id, display_name) SELECT 'u' || i, 'U' FROM generate_series(1, 9) i;
                INSERT INTO streams (id, title, planned_start_at) VALUES ('s', 'S', now() + interval '1 hour');
                """)
            // u1..u5 (in text order, as the column compares) by w1, which records d1 and d2.
            let first = try await Self.claim(1...5, owner: "w1", on: client)
            let firstID = try #require(first.id)
            #expect(first.claimed == ["d1", "d2", "d3", "d4", "d5"] && first.sent.isEmpty)
            try await client.withConnection { try ReminderDeliveryQueries.record("s", claim: firstID, sent: ["d1", "d2"], on: $0) }
            #expect(try await client.withConnection { try ReminderDeliveryQueries.claimOwners("s", except: "w2", on: $0) } == ["w1"])

            // Overlapping a live claim of a live worker: nothing; beside it: its own range.
            let held = try await Self.claim(4...7, owner: "w2", on: client)
            #expect(held.id == nil && held.claimed.isEmpty && held.sent.isEmpty)
            let beside = try await Self.claim(6...9, owner: "w2", on: client)
            #expect(beside.id != nil && beside.claimed.count == 4)

            // w1 died: its range is taken over, the devices it recorded are not sent again.
            let takeover = try await Self.claim(1...5, owner: "w3", dead: ["w1"], on: client)
            let takeoverID = try #require(takeover.id)
            #expect(takeover.sent == ["d1", "d2"] && takeover.claimed == ["d3", "d4", "d5"])
            #expect(try await client.withConnection { try ReminderDeliveryQueries.claimOwners("s", except: nil, on: $0) }.sorted() == ["w2", "w3"],
                    "the dead worker's claim ended with the takeover")

            // Released after its chunk was written: a later run claims it again and skips what both recorded.
            try await client.withConnection { connection in
                try ReminderDeliveryQueries.record("s", claim: takeoverID, sent: ["d3"], on: connection)
                try ReminderDeliveryQueries.release(takeoverID, on: connection)
            }
            let again = try await Self.claim(1...5, owner: "w4", on: client)
            #expect(again.id != nil && again.sent == ["d1", "d2", "d3"] && again.claimed == ["d4", "d5"])
            let rows = try await client.lines("SELECT count(*)::text FROM countdown_reminder_sends")
            #expect(rows == ["2"], "one row per recorded batch")
        }
    }
}
