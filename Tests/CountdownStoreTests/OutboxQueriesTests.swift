import CountdownDomain
import CountdownStore
import Foundation
import Postgres
import Testing

/// The relays take the outbox's oldest rows no other relay holds, decode what the triggers wrote, and delete what
/// they relayed.
@Suite struct OutboxQueriesTests {
    static func describe(_ rows: [OutboxRow]) -> [String] {
        rows.map { "\($0.topic.rawValue) \($0.streamID ?? "-") \($0.userID ?? "-") \($0.deviceID ?? "-") \($0.rescheduled)" }
    }

    @Test func takeSkipsRowsAnotherRelayHolds() async throws {
        try await StoreDatabase.with(prefix: "store_outbox_take") { client in
            for stream in ["s1", "s2", "s3"] {
                try await client.withConnection { try OutboxQueries.replanStream(stream, on: $0) }
            }
            let configuration = client.configuration
            let (held, other, byID, peeked) = try await client.transaction { first in
                let held = try OutboxQueries.take(limit: 2, on: first)
                let second = try PostgresConnection(configuration: configuration)
                defer { second.close() }
                return try second.transaction { second in
                    (held, try OutboxQueries.take(limit: 5, on: second), try OutboxQueries.take(id: held.first?.id ?? -1, on: second),
                     try OutboxQueries.peek(limit: 5, on: second))
                }
            }
            #expect(Self.describe(held) == ["stream s1 - - true", "stream s2 - - true"])
            #expect(Self.describe(other) == ["stream s3 - - true"], "the rows the first relay holds are skipped")
            #expect(byID.isEmpty, "a held row is not taken by id either")
            #expect(peeked.map(\.streamID) == ["s1", "s2", "s3"], "peeking takes no lock and waits for none")
            #expect(peeked.map(\.id) == (held + other).map(\.id))

            try await client.withConnection { try OutboxQueries.delete(held.map(\.id), on: $0) }
            try await client.withConnection { try OutboxQueries.delete([], on: $0) }
            let left = try await client.transaction { try OutboxQueries.take(limit: 5, on: $0) }
            #expect(Self.describe(left) == ["stream s3 - - true"])
            #expect(try await client.transaction { try OutboxQueries.take(id: held.first?.id ?? -1, on: $0) }.isEmpty, "a deleted row is gone")
            let otherID = try #require(other.first?.id)
            #expect(try await client.transaction { try OutboxQueries.take(id: otherID, on: $0) }.map(\.id) == [otherID])
        }
    }

    @Test func rowsTheTriggersWroteDecode() async throws {
        try await StoreDatabase.with(prefix: "store_outbox_decode") { client in
            try await client.seed("""
                INSERT INTO users (id, display_name) VALUES ('u', 'U');
                INSERT INTO devices (device_id, user_id, platform, fcm_token) VALUES ('d', 'u', 'ios', 'fcm');
                INSERT INTO streams (id, title, planned_start_at) VALUES ('s', 'S', now() + interval '1 hour');
                INSERT INTO stream_participants (stream_id, user_id, role) VALUES ('s', 'u', 'creator');
                INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token) VALUES ('s', 'd', 'u', 'run');
                INSERT INTO stream_reminders (stream_id, user_id) VALUES ('s', 'u');
                INSERT INTO countdown_retired_sessions (stream_id, device_id, live_activity_token, user_id, reason)
                    VALUES ('s', 'd', 'old-run', 'u', 'takeover');
                UPDATE streams SET planned_start_at = planned_start_at + interval '5 minutes' WHERE id = 's';
                """)
            let before = try await client.query("SELECT now() AS now")[0].decode("now", as: Date.self)
            let rows = try await client.transaction { try OutboxQueries.take(limit: 100, on: $0) }
            #expect(Self.describe(rows) == [
                "device - u d false", "stream s - - false", "participant s u - false", "session s u d false", "reminder s u - false",
                "retired s u d false", "stream s - - true",
            ])
            #expect(rows.map(\.id) == rows.map(\.id).sorted(), "oldest first")
            #expect(rows.allSatisfy { $0.createdAt <= before && $0.createdAt > before.addingTimeInterval(-60) })
        }
    }

    /// A topic this version does not know (written by a newer one) is read as a change of its stream, which is
    /// harmless: the stream is planned again.
    @Test func anUnknownTopicReadsAsAStreamChange() async throws {
        try await StoreDatabase.with(prefix: "store_outbox_unknown") { client in
            try await client.seed("""
                ALTER TABLE countdown_outbox DROP CONSTRAINT countdown_outbox_topic_check;
                INSERT INTO countdown_outbox (topic, stream_id, user_id) VALUES ('newer', 's', 'u');
                """)
            let rows = try await client.transaction { try OutboxQueries.take(limit: 5, on: $0) }
            #expect(Self.describe(rows) == ["stream s u - false"])
        }
    }
}
