import Foundation
import Postgres
import Testing

@Suite struct ListenerTests {
    @Test func receivesNotificationsOnQuotedChannels() async throws {
        try await withTestClient { client, database in
            let listener = PostgresListener(configuration: database.configuration)
            let channel = "stream \"events\"; DROP"
            try await listener.listen(channel)
            try await client.execute("SELECT pg_notify($1, $2)", [channel, "héllo 👋"])
            let event = try await listener.nextEvent(timeout: .seconds(5))
            guard case .notification(let notification) = event else {
                Issue.record("expected a notification, got \(String(describing: event))")
                return
            }
            #expect(notification.channel == channel)
            #expect(notification.payload == "héllo 👋")
            #expect(notification.processID > 0)

            try await client.execute("SELECT pg_notify($1, $2)", ["unheard", "ignored"])
            #expect(try await listener.nextEvent(timeout: .milliseconds(300)) == nil)
            await listener.close()
        }
    }

    @Test func notificationsInsideATransactionArriveAfterCommit() async throws {
        try await withTestClient { client, database in
            let listener = PostgresListener(configuration: database.configuration)
            try await listener.listen("jobs")
            try await client.transaction { connection in
                for index in 1...3 { try connection.execute("SELECT pg_notify('jobs', $1)", ["\(index)"]) }
            }
            var payloads: [String] = []
            while payloads.count < 3, case .notification(let notification)? = try await listener.nextEvent(timeout: .seconds(5)) {
                payloads.append(notification.payload)
            }
            #expect(payloads == ["1", "2", "3"])
            await listener.close()
        }
    }

    @Test func timeoutReturnsNilPromptly() async throws {
        try await withTestClient { client, database in
            let listener = PostgresListener(configuration: database.configuration)
            try await listener.listen("quiet")
            let clock = ContinuousClock()
            let start = clock.now
            let event = try await listener.nextEvent(timeout: .milliseconds(250))
            let elapsed = clock.now - start
            #expect(event == nil)
            #expect(elapsed >= .milliseconds(240))
            #expect(elapsed < .seconds(2))
            await listener.close()
            _ = client
        }
    }

    @Test func rejectsBadChannelNamesAndUseAfterClose() async throws {
        try await withTestClient { _, database in
            let listener = PostgresListener(configuration: database.configuration)
            for channel in ["", String(repeating: "x", count: 64)] {
                let error = await #expect(throws: PostgresError.self) { try await listener.listen(channel) }
                #expect(error?.code == .invalidParameter)
            }
            await listener.close()
            let error = await #expect(throws: PostgresError.self) { try await listener.listen("late") }
            #expect(error?.code == .closed)
        }
    }
}
