import CountdownAPI
import CountdownCommands
import Foundation
import Testing

@Suite("POST /live-stream/:id/cancel against PostgreSQL")
struct CancelEndpointTests {
    func cancel(_ fixture: DatabaseFixture, _ stream: String, as user: String, role: String? = nil) async throws -> TestAPI.Reply {
        await fixture.api.send("POST", "/live-stream/\(stream)/cancel", bearer: try fixture.api.token(user, role: role))
    }

    func status(_ fixture: DatabaseFixture, _ stream: String) async throws -> String? {
        try await fixture.rows("SELECT status FROM streams WHERE id = $1", [stream]).first?.decode("status")
    }

    @Test func theCreatorCancelsReminders() async throws {
        try await DatabaseFixture.with { fixture in
            try await fixture.seed(users: ["creator", "guest", "fan"], stream: "s1", creator: "creator", guests: ["guest"])
            try await fixture.sql("INSERT INTO stream_reminders (stream_id, user_id) VALUES ('s1', 'fan'), ('s1', 'guest')")
            try await fixture.sql("UPDATE stream_reminders SET status = 'sent' WHERE user_id = 'guest'")
            let streamRowsBefore = try await fixture.outbox("stream").count

            #expect(try await cancel(fixture, "s1", as: "creator").succeeded)
            #expect(try await status(fixture, "s1") == "cancelled")
            let reminders = try await fixture.rows("SELECT user_id, status FROM stream_reminders ORDER BY user_id").map {
                [try $0.decode("user_id", as: String.self), try $0.decode("status", as: String.self)]
            }
            #expect(reminders == [["fan", "cancelled"], ["guest", "sent"]])
            #expect(try await fixture.outbox("stream").count == streamRowsBefore + 1)

            let again = try await cancel(fixture, "s1", as: "creator")
            #expect(again.status == 409)
            #expect(again.errorCode == "stream_already_ended")
        }
    }

    @Test func guestsAndStrangersMayNotCancelButAdminsMay() async throws {
        try await DatabaseFixture.with { fixture in
            try await fixture.seed(users: ["creator", "guest", "fan"], stream: "s1", creator: "creator", guests: ["guest"])
            for user in ["guest", "fan"] {
                let reply = try await cancel(fixture, "s1", as: user)
                #expect(reply.status == 403, "\(user)")
                #expect(reply.errorCode == "forbidden")
            }
            // A token whose sub is no user cancels nothing, even with the admin role.
            for role in [nil, "admin"] as [String?] {
                let ghost = try await cancel(fixture, "s1", as: "ghost", role: role)
                #expect(ghost.status == 403)
                #expect(ghost.errorCode == "unknown_user")
            }
            #expect(try await status(fixture, "s1") == "scheduled")
            try await fixture.seed(users: ["ops"])
            #expect(try await cancel(fixture, "s1", as: "ops", role: "admin").succeeded)
            #expect(try await status(fixture, "s1") == "cancelled")
        }
    }

    @Test func unknownAndEndedStreams() async throws {
        try await DatabaseFixture.with { fixture in
            try await fixture.seed(users: ["creator", "ops"], stream: "s1", creator: "creator")
            let unknown = try await cancel(fixture, "missing", as: "ops", role: "admin")
            #expect(unknown.status == 404)
            #expect(unknown.errorCode == "stream_not_found")
            for ended in ["ready", "started", "expired"] {
                try await fixture.sql("UPDATE streams SET status = $1 WHERE id = 's1'", [ended])
                #expect(try await cancel(fixture, "s1", as: "creator").status == 409, "\(ended)")
                #expect(try await status(fixture, "s1") == ended)
            }
        }
    }

    @Test func streamCommandsReportWhatTheCancelDid() async throws {
        try await DatabaseFixture.with { fixture in
            try await fixture.seed(users: ["creator", "fan1", "fan2"], stream: "s1", creator: "creator")
            try await fixture.sql("INSERT INTO stream_reminders (stream_id, user_id) VALUES ('s1', 'fan1'), ('s1', 'fan2')")
            try await fixture.sql("INSERT INTO devices (device_id, user_id, platform) VALUES ('d-0000000000000001', 'creator', 'ios')")
            try await fixture.sql("INSERT INTO live_activity_sessions (stream_id, device_id, live_activity_token) VALUES ('s1', 'd-0000000000000001', 'ab')")
            let outcome = try await StreamCommands.cancel("s1", database: fixture.client)
            #expect(outcome == .cancelled(.init(remindersCancelled: 2, sessionsToEnd: 1)))
            #expect(try await StreamCommands.cancel("s1", database: fixture.client) == .alreadyEnded(.cancelled))
            #expect(try await StreamCommands.cancel("nope", database: fixture.client) == .notFound)
        }
    }

    @Test func readinessFollowsTheDatabase() async throws {
        try await DatabaseFixture.with { fixture in
            #expect(await fixture.api.send("GET", "/readyz").status == 200)
            fixture.client.close()
            let down = await fixture.api.send("GET", "/readyz")
            #expect(down.status == 503)
            #expect(down.errorCode == "unavailable")
            let write = await fixture.api.send("POST", "/notifications/device-token",
                                               json: ["token": Sample.fcmToken(), "platform": "ios", "deviceId": Sample.deviceID()])
            #expect(write.status == 503)
        }
    }
}
