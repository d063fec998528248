import BlockingIO
import CountdownDomain
@testable import CountdownFlows
import CountdownStore
import Foundation
import Postgres
import PushPayloads
import Telemetry
import Testing
import TestSupport

/// What one page of a reminder fan-out reads and writes: its recipients by key, one notification per language, and
/// the reminders it marks `sent` with the tokens it clears.
@Suite struct ReminderRecipientsTests {
    /// Records each notification by FCM token; refuses the tokens in `refused`.
    final class Gateway: OnePushGateway {
        let sent = Locked([String: ReminderNotification]())
        let refused: Set<String>

        init(refused: Set<String> = []) { self.refused = refused }

        func send(_ push: OutgoingPush, kind: PushKind) async -> Delivery {
            guard case .notification(let notification, let fcm) = push else { return .rejected(reason: "unexpected") }
            if refused.contains(fcm) { return .tokenRefused(.fcm, reason: "UNREGISTERED") }
            sent.withLock { $0[fcm] = notification }
            return .accepted(name: "projects/p/messages/\(fcm)")
        }
    }

    /// Users of every shape a page meets, each with an active reminder for stream `s`:
    /// - `a-en`: English user, two devices (one Turkish), a third device with an empty token;
    /// - `b-tr`: Turkish user, one device; `c-off`: `live_stream` off; `d-none`: no device;
    /// - `e-on`: preference row present and on, device locale `en-GB`;
    /// and `z-other`, whose reminder is for another stream.
    static func withUsers(_ body: (PostgresClient) async throws -> Void) async throws {
        try await MigratedDatabase.with(prefix: "recipients") { client in
            try await client.transaction { c in
                try c.execute("""
                    INSERT INTO users (id, display_name, locale) VALUES
                      ('a-en', 'A', 'en'), ('b-tr', 'B', 'tr'), ('c-off', 'C', 'tr'), ('d-none', 'D', 'en'), ('e-on', 'E', 'tr'),
                      ('z-other', 'Z', 'tr')
                    """)
                try c.execute("""
                    INSERT INTO devices (device_id, user_id, platform, fcm_token, locale) VALUES
                      ('a1', 'a-en', 'ios', 'fcm-a1', NULL), ('a2', 'a-en', 'android', 'fcm-a2', 'tr-TR'), ('a3', 'a-en', 'web', '', NULL),
                      ('b1', 'b-tr', 'android', 'fcm-b1', NULL), ('c1', 'c-off', 'ios', 'fcm-c1', NULL), ('e1', 'e-on', 'web', 'fcm-e1', 'en-GB'),
                      ('z1', 'z-other', 'ios', 'fcm-z1', NULL)
                    """)
                try c.execute("""
                    INSERT INTO notification_preferences (user_id, category, enabled) VALUES
                      ('c-off', 'live_stream', false), ('e-on', 'live_stream', true), ('b-tr', 'marketing', false)
                    """)
                try c.execute("INSERT INTO streams (id, title, planned_start_at) VALUES ('s', 'Final', now() + interval '5 minutes'), ('t', 'Other', now() + interval '5 minutes')")
                try c.execute("INSERT INTO stream_participants (stream_id, user_id, role) VALUES ('s', 'z-other', 'creator'), ('t', 'z-other', 'creator')")
                try c.execute("""
                    INSERT INTO stream_reminders (stream_id, user_id) VALUES
                      ('s', 'a-en'), ('s', 'b-tr'), ('s', 'c-off'), ('s', 'd-none'), ('s', 'e-on'), ('t', 'z-other')
                    """)
            }
            try await body(client)
        }
    }

    static func statuses(_ client: PostgresClient) async throws -> [String: String] {
        var statuses: [String: String] = [:]
        for row in try await client.query("SELECT stream_id || '/' || user_id AS k, status FROM stream_reminders") {
            statuses[try row.decode("k")] = try row.decode("status", as: String.self)
        }
        return statuses
    }

    @Test func recipientsAreEveryDeviceWithATokenAndThePreferenceInTheUsersOrder() async throws {
        try await Self.withUsers { client in
            let users = ["a-en", "b-tr", "c-off", "d-none", "e-on", "missing"]
            let recipients = try await client.withConnection { try ReminderQueries.recipients(users, on: $0) }
            let rows = recipients.map { "\($0.user) \($0.device ?? "-") \($0.fcmToken ?? "-") \($0.locale ?? "-") \($0.userLocale ?? "-") \($0.enabled)" }
            #expect(rows.count == 6)
            #expect(Set(rows.prefix(2)) == ["a-en a1 fcm-a1 - en true", "a-en a2 fcm-a2 tr-TR en true"], "both devices with a token, not the empty one")
            #expect(Array(rows.dropFirst(2)) == [
                "b-tr b1 fcm-b1 - tr true",  // another category's preference does not count
                "c-off c1 fcm-c1 - tr false",
                "d-none - - - en true",  // no device: one row without one
                "e-on e1 fcm-e1 en-GB tr true",
            ], "a user missing from users is left out")
            #expect(try await client.withConnection { try ReminderQueries.recipients([], on: $0) }.isEmpty)
        }
    }

    @Test func markSentMarksExactlyTheGivenActiveReminders() async throws {
        try await Self.withUsers { client in
            try await client.execute("UPDATE stream_reminders SET status = 'cancelled' WHERE user_id = 'c-off'")
            try await client.withConnection { c in
                // Out of order, with a cancelled reminder, a user between the others left out, and a user of another stream.
                try ReminderQueries.markSent("s", users: ["e-on", "a-en", "c-off", "z-other"], on: c)
                try ReminderQueries.markSent("s", users: [], on: c)
            }
            #expect(try await Self.statuses(client) == [
                "s/a-en": "sent", "s/b-tr": "active", "s/c-off": "cancelled", "s/d-none": "active", "s/e-on": "sent", "t/z-other": "active",
            ])
        }
    }

    @Test func aPageSendsOneNotificationPerLanguageAndSettlesRemindersWithTheTokensItClears() async throws {
        try await Self.withUsers { client in
            let gateway = Gateway(refused: ["fcm-b1"])
            let context = FlowContext(database: client, push: gateway, payloads: try PushPayloadBuilder(), settings: FlowSettings(reminderLeadSeconds: 600),
                                      transport: .fcm, metrics: CountingFlowMetrics(), logger: Logger(level: .error, sink: CapturingLogSink()))
            let outcome = try await JobHandler(context: context).handle(.reminderPage(stream: "s", after: "", through: nil))
            #expect(outcome == .done(detail: "reminded 2 users"))
            let sent = gateway.sent.value
            #expect(Set(sent.keys) == ["fcm-a1", "fcm-a2", "fcm-e1"])
            // By language (device locale over the user's), with the same notification for every device of a language.
            let english = try #require(sent["fcm-a1"])
            let turkish = try #require(sent["fcm-a2"])
            #expect(sent["fcm-e1"] == english)
            #expect(english != turkish)
            #expect(english.title != turkish.title)
            #expect(english.data["streamId"] == "s" && turkish.data["streamId"] == "s")
            // The refused token is cleared and recorded; its user, reminded nowhere, stays active, as do the users
            // with the preference off or without a device.
            #expect(try await Self.statuses(client) == [
                "s/a-en": "sent", "s/b-tr": "active", "s/c-off": "active", "s/d-none": "active", "s/e-on": "sent", "t/z-other": "active",
            ])
            let token = try await client.query("SELECT fcm_token FROM devices WHERE device_id = 'b1'").first?.decode("fcm_token", as: String?.self)
            #expect(token == .some(nil))
            let recorded = try await client.query("SELECT device_id, old_value, stream_id FROM countdown_token_invalidations")
            #expect(try recorded.map { "\(try $0.decode("device_id", as: String.self)) \(try $0.decode("old_value", as: String.self)) \(try $0.decode("stream_id", as: String.self))" }
                    == ["b1 fcm-b1 s"])
        }
    }
}
