import CountdownDomain
import CountdownStore
import Foundation
import Postgres
import Testing

/// A start the restore guard recorded as sent (`assumed_sent`) may be showing on an Android phone: its countdown gets
/// the stream's updates and end like one whose start was accepted (`sent`), and keeps the stream's update and end
/// jobs wanted.
@Suite struct AndroidAssumedSentTests {
    static let rows = """
        INSERT INTO users (id, display_name, locale) VALUES ('u', 'U', 'en');
        INSERT INTO devices (device_id, user_id, platform, fcm_token) VALUES
            ('accepted', 'u', 'android', 'fcm-a'), ('restored', 'u', 'android', 'fcm-r'), ('waiting', 'u', 'android', 'fcm-w'),
            ('iphone', 'u', 'ios', 'fcm-i');
        INSERT INTO streams (id, title, planned_start_at) VALUES ('s', 'S', now() + interval '30 minutes');
        INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status, reason, sent_at) VALUES
            ('s', 'u', 'accepted', 'sent', NULL, now()), ('s', 'u', 'restored', 'assumed_sent', 'restored', NULL),
            ('s', 'u', 'waiting', 'pending', NULL, NULL), ('s', 'u', 'iphone', 'assumed_sent', 'restored', NULL);
        """

    @Test func aRestoredStartIsACountdownTheUpdatesAndTheEndReach() async throws {
        try await StoreDatabase.with(prefix: "store_android_assumed") { client in
            try await client.seed(Self.rows)
            #expect(try await client.lines("""
                SELECT (SELECT count(*) \(AndroidCountdownQueries.liveRows))::text FROM streams s WHERE s.id = 's'
                """) == ["2"], "both countdowns keep the stream's update and end jobs wanted")
            let claimed = try await client.transaction { try AndroidCountdownQueries.claimLive("s", seconds: 60, owner: "w1", on: $0) }
            #expect(claimed.map(\.device).sorted() == ["accepted", "restored"])
            #expect(claimed.first { $0.device == "restored" }?.shown(PlannedStartTimeline(moves: [], current: .now)) == nil,
                    "what a restored start shows is not known: the update goes")
            let elsewhere = try await client.transaction { try AndroidCountdownQueries.claimedElsewhere("s", owner: "w2", on: $0).count }
            #expect(elsewhere == 2)
            try await client.transaction {
                try AndroidCountdownQueries.settle("s", claimed.map { .init(user: $0.user, device: $0.device, endedReason: "ended") }, on: $0)
            }
            #expect(try await client.lines("""
                SELECT concat_ws(' ', device_id, status, coalesce(android_end_reason, '-')) FROM countdown_start_ledger ORDER BY 1
                """) == ["accepted sent ended", "iphone assumed_sent -", "restored assumed_sent ended", "waiting pending -"])
        }
    }

    /// A worker killed between FCM's answer and its record leaves the start `sending` under a claim that expires: the
    /// countdown may be showing, so it is reached like an accepted one once the claim has expired (before, the end job
    /// found no countdown and the phone counted down to its `staleAt`).
    @Test func aStartLeftSendingByADeadWorkerIsACountdownTheEndReaches() async throws {
        try await StoreDatabase.with(prefix: "store_android_dead_sending") { client in
            try await client.seed("""
                INSERT INTO users (id, display_name, locale) VALUES ('u', 'U', 'en');
                INSERT INTO devices (device_id, user_id, platform, fcm_token) VALUES
                    ('dead', 'u', 'android', 'fcm-d'), ('inflight', 'u', 'android', 'fcm-f');
                INSERT INTO streams (id, title, planned_start_at) VALUES ('s', 'S', now() + interval '30 minutes');
                INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status, claimed_by, claimed_until) VALUES
                    ('s', 'u', 'dead', 'sending', 'killed', now() - interval '1 second'),
                    ('s', 'u', 'inflight', 'sending', 'alive', now() + interval '1 minute');
                """)
            #expect(try await client.lines("""
                SELECT (SELECT count(*) \(AndroidCountdownQueries.liveRows))::text FROM streams s WHERE s.id = 's'
                """) == ["2"], "both keep the stream's end job wanted")
            let claimed = try await client.transaction { try AndroidCountdownQueries.claimLive("s", seconds: 60, owner: "w1", on: $0) }
            #expect(claimed.map(\.device) == ["dead"], "the start still in flight is waited for, not ended")
            try await client.transaction {
                try AndroidCountdownQueries.settle("s", claimed.map { .init(user: $0.user, device: $0.device, endedReason: "cancelled") }, on: $0)
            }
            #expect(try await client.lines("""
                SELECT concat_ws(' ', device_id, coalesce(android_end_reason, '-')) FROM countdown_start_ledger ORDER BY 1
                """) == ["dead cancelled", "inflight -"])
        }
    }
}
