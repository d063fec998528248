import CountdownDomain
import CountdownStore
import Foundation
import Postgres
import Testing

/// A backend transaction holding `FOR UPDATE` on one stream's row delays that stream only: the rest of the start
/// batch goes out at once, and the held stream starts once the lock is gone.
@Suite struct HeldStreamTests {
    @Test func aHeldStreamWaitsAloneAndStartsAfterTheRelease() async throws {
        try await StartBatchTests.withHandler { handler, db, gateway in
            try await db.transaction { c in
                try c.executeScript("""
                    INSERT INTO users (id, display_name) VALUES ('a', 'A'), ('b', 'B');
                    INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token)
                        VALUES ('a1', 'a', 'ios', 'fcm-a1', 'pts-a1'), ('b1', 'b', 'ios', 'fcm-b1', 'pts-b1');
                    INSERT INTO streams (id, title, planned_start_at) VALUES
                        ('held', 'Held', now() + interval '30 minutes'), ('free', 'Free', now() + interval '30 minutes');
                    INSERT INTO stream_participants (stream_id, user_id, role) VALUES ('held', 'a', 'creator'), ('free', 'b', 'creator');
                    """)
            }
            let backend = PostgresSession(configuration: db.configuration)
            defer { backend.close() }
            let outcomes = try await backend.transaction { transaction in
                _ = try await transaction.run { try $0.query("SELECT id FROM streams WHERE id = 'held' FOR UPDATE") }
                return try await handler.handleStarts(["held", "free"])
            }
            #expect(outcomes["held"] == .reschedule(after: .seconds(1), reason: "stream_locked"))
            #expect(outcomes["free"] == .done(detail: "sent 1 of 1 claimed, 1 devices considered"))
            #expect(gateway.sent.value == ["fcm-b1"])
            let again = try await handler.handleStarts(["held"])
            #expect(again["held"] == .done(detail: "sent 1 of 1 claimed, 1 devices considered"))
            #expect(gateway.sent.value == ["fcm-b1", "fcm-a1"])
        }
    }
}
