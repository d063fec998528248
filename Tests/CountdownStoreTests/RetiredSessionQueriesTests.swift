import CountdownStore
import Postgres
import Testing

/// Sessions a device takeover retired: claimed by one sender at a time, deleted once done, counted when their end
/// push fails and moved to `countdown_undeliverable_ends` once the window closed.
@Suite struct RetiredSessionQueriesTests {
    static let rows = """
        INSERT INTO users (id, display_name, locale) VALUES ('old', 'Old', 'en'), ('new', 'New', 'tr');
        INSERT INTO devices (device_id, user_id, platform, fcm_token, locale) VALUES ('phone', 'new', 'ios', 'fcm-phone', 'de');
        INSERT INTO streams (id, title, planned_start_at) VALUES ('s', 'S', now() + interval '30 minutes');
        INSERT INTO countdown_retired_sessions (stream_id, device_id, live_activity_token, user_id, reason) VALUES
            ('s', 'phone', 'run-2', 'old', 'takeover'), ('s', 'phone', 'run-1', 'old', 'takeover'),
            ('s', 'tablet', 'run-3', 'old', 'takeover');
        """

    static func claim(_ device: String, by owner: String, on client: PostgresClient) async throws -> [RetiredSessionQueries.Retired] {
        try await client.withConnection { try RetiredSessionQueries.claim(stream: "s", device: device, seconds: 60, owner: owner, on: $0) }
    }

    static func describe(_ claimed: [RetiredSessionQueries.Retired]) -> [String] {
        claimed.map { [$0.stream, $0.device, $0.activityToken, $0.user ?? "-", $0.fcmToken ?? "-", $0.locale ?? "-", $0.userLocale ?? "-",
                       String($0.attempts)].joined(separator: " ") }
    }

    static func table(_ client: PostgresClient) async throws -> [String] {
        try await client.lines("""
            SELECT concat_ws(' ', device_id, live_activity_token, attempts, coalesce(last_reason, '-'), coalesce(claimed_by, '-'),
                             (claimed_until IS NOT NULL)::text, (first_failed_at IS NOT NULL)::text)
            FROM countdown_retired_sessions ORDER BY device_id, live_activity_token
            """)
    }

    @Test func aClaimTakesWhatNoOtherSenderHolds() async throws {
        try await StoreDatabase.with(prefix: "store_retired_claim") { client in
            try await client.seed(Self.rows)
            let claimed = try await Self.claim("phone", by: "w1", on: client)
            #expect(Self.describe(claimed) == ["s phone run-1 old fcm-phone de en 0", "s phone run-2 old fcm-phone de en 0"])
            #expect(try await Self.claim("phone", by: "w2", on: client).isEmpty, "held by w1")
            try await client.execute("UPDATE countdown_retired_sessions SET claimed_until = now() - interval '1 second' WHERE live_activity_token = 'run-1'")
            #expect(try await Self.claim("phone", by: "w2", on: client).map(\.activityToken) == ["run-1"], "an expired claim is taken over")
            #expect(try await Self.table(client) == ["phone run-1 0 - w2 true false", "phone run-2 0 - w1 true false", "tablet run-3 0 - - false false"])

            let gone = try await Self.claim("tablet", by: "w1", on: client)
            #expect(Self.describe(gone) == ["s tablet run-3 old - - en 0"],
                    "a device that is gone has no token or locale")
        }
    }

    @Test func finishedDeletesOnlyTheNamedSessions() async throws {
        try await StoreDatabase.with(prefix: "store_retired_finished") { client in
            try await client.seed(Self.rows)
            let (deleted, none, phone, tablet, pending, first) = try await client.withConnection { connection in
                (try RetiredSessionQueries.finished(stream: "s", device: "phone", tokens: ["run-1", "run-3", "other"], on: connection),
                 try RetiredSessionQueries.finished(stream: "s", device: "phone", tokens: [], on: connection),
                 try RetiredSessionQueries.count(stream: "s", device: "phone", on: connection),
                 try RetiredSessionQueries.count(stream: "s", device: "tablet", on: connection),
                 try RetiredSessionQueries.pending(limit: 10, on: connection).map { "\($0.stream) \($0.device)" },
                 try RetiredSessionQueries.pending(limit: 1, on: connection).map { "\($0.stream) \($0.device)" })
            }
            #expect((deleted, none, phone, tablet) == (1, 0, 1, 1), "run-3 belongs to another device")
            #expect(pending == ["s phone", "s tablet"])
            #expect(first == ["s phone"])
        }
    }

    @Test func failuresAreCountedThenGivenUpAfterTheWindow() async throws {
        try await StoreDatabase.with(prefix: "store_retired_failed") { client in
            try await client.seed(Self.rows)
            func fail(_ failures: [(String, String)]) async throws -> EndDeliveryQueries.Outcome {
                let failures = failures.map { RetiredSessionQueries.Failure(activityToken: $0.0, reason: $0.1) }
                return try await client.withConnection {
                    try RetiredSessionQueries.failed(failures, stream: "s", device: "phone", windowSeconds: 900, on: $0)
                }
            }
            _ = try await Self.claim("phone", by: "w1", on: client)
            let first = try await fail([("run-1", "retry"), ("run-2", "rejected")])
            #expect(EndDeliveryQueriesTests.summary(first) == "retrying 2, attempts 1, given up []")
            #expect(try await Self.table(client) == ["phone run-1 1 retry - false true", "phone run-2 1 rejected - false true",
                                                     "tablet run-3 0 - - false false"], "counted, claims released")
            let firstFailure = try await client.lines("SELECT first_failed_at::text FROM countdown_retired_sessions WHERE live_activity_token = 'run-1'")
            let second = try await fail([("run-1", "config")])
            #expect(EndDeliveryQueriesTests.summary(second) == "retrying 1, attempts 2, given up []")
            #expect(try await client.lines("SELECT first_failed_at::text FROM countdown_retired_sessions WHERE live_activity_token = 'run-1'")
                    == firstFailure, "the first failure's time stays")

            try await client.execute("UPDATE countdown_retired_sessions SET first_failed_at = now() - interval '901 seconds' WHERE live_activity_token = 'run-1'")
            let last = try await fail([("run-1", "retry")])
            #expect(EndDeliveryQueriesTests.summary(last) == "retrying 0, attempts 0, given up [\"takeover: retry\"]")
            #expect(try await Self.table(client) == ["phone run-2 1 rejected - false true", "tablet run-3 0 - - false false"])
            #expect(try await client.lines("""
                SELECT concat_ws(' ', stream_id, device_id, live_activity_token, reason, attempts) FROM countdown_undeliverable_ends
                """) == ["s phone run-1 takeover: retry 3"])
            #expect(EndDeliveryQueriesTests.summary(try await fail([])) == "retrying 0, attempts 0, given up []")
        }
    }
}
