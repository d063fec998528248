import CountdownDomain
import CountdownStore
import Foundation
import Postgres
import Testing
import TestSupport

/// An empty-string token, as a careless writer leaves it, reads as absent for starts, sessions and reminders.
@Suite struct EmptyTokenTests {
    @Test func emptyTokensReadAsAbsent() async throws {
        try await TestDatabase.withFresh(prefix: "emptytok") { _, client in
            _ = try await Migrator().migrate(client)
            try await client.withConnection { c in
                try c.executeScript("""
                    INSERT INTO users (id, display_name) VALUES ('u', 'U');
                    INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token)
                        VALUES ('blank', 'u', 'ios', '', ''), ('fine', 'u', 'ios', 'f', 'p');
                    INSERT INTO streams (id, title, planned_start_at) VALUES ('s', 'S', now() + interval '1 hour');
                    INSERT INTO stream_participants (stream_id, user_id, role) VALUES ('s', 'u', 'creator');
                    INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token) VALUES ('s', 'blank', 'u', 't');
                    """)
            }
            let read = try await client.withConnection { c in
                (candidates: try StartLedger.candidates(["s"], scope: .stream, on: c).map(\.1),
                 sessions: try SessionQueries.sessions("s", devices: nil, on: c),
                 recipients: try ReminderQueries.recipients(["u"], on: c))
            }
            let blank = try #require(read.candidates.first { $0.deviceID == "blank" })
            #expect(blank.fcmToken == nil && blank.pushToStartToken == nil)
            #expect(StartEligibility.skipReason(for: blank) == .noPushToStartToken)
            #expect(StartEligibility.skipReason(for: try #require(read.candidates.first { $0.deviceID == "fine" })) == nil)
            #expect(read.sessions.map(\.fcmToken) == [nil])
            #expect(read.recipients.map(\.device) == ["fine"])
        }
    }
}
