import CountdownStore
import Foundation
import Postgres
import Testing

/// One stream of a start batch that cannot be read (an old row with a non-finite date) is skipped and
/// quarantined; the other streams of the batch start.
@Suite struct UnreadableStreamTests {
    @Test func anUnreadableStreamIsSkippedAndTheBatchProceeds() async throws {
        try await StartBatchTests.withHandler { handler, db, gateway in
            try await db.transaction { c in
                try c.executeScript("""
                    ALTER TABLE streams DROP CONSTRAINT streams_planned_start_sane;
                    INSERT INTO users (id, display_name) VALUES ('a', 'A');
                    INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token) VALUES ('a1', 'a', 'ios', 'fcm-a1', 'pts-a1');
                    INSERT INTO streams (id, title, planned_start_at) VALUES
                        ('good', 'Good', now() + interval '30 minutes'), ('bad', 'Bad', 'infinity');
                    INSERT INTO stream_participants (stream_id, user_id, role) VALUES ('good', 'a', 'creator'), ('bad', 'a', 'creator');
                    """)
            }
            let outcomes = try await handler.handleStarts(["bad", "good"])
            #expect(outcomes["bad"] == .skipped(reason: "unreadable_stream"))
            #expect(outcomes["good"] == .done(detail: "sent 1 of 1 claimed, 1 devices considered"))
            #expect(gateway.sent.value == ["fcm-a1"])
            let quarantined = try await db.withConnection { try QuarantineQueries.list(on: $0) }
            #expect(quarantined.map { "\($0.key) \($0.foundBy)" } == ["bad start"])
        }
    }
}
