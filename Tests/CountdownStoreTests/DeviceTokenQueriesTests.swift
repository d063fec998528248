import CountdownDomain
import CountdownStore
import Postgres
import Testing

/// A refused token is cleared only where the device (or session) still holds that same value, each kind in its own
/// column, and every cleared value is recorded in `countdown_token_invalidations` so it can be restored.
@Suite struct DeviceTokenQueriesTests {
    static let rows = """
        INSERT INTO users (id, display_name) VALUES ('u', 'U');
        INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token) VALUES
            ('d1', 'u', 'ios', 'fcm-1', 'pts-1'), ('d2', 'u', 'ios', 'fcm-2-new', 'pts-2'), ('d3', 'u', 'ios', 'same', 'same');
        INSERT INTO streams (id, title, planned_start_at) VALUES ('s', 'S', now() + interval '1 hour');
        INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token, activity_id) VALUES
            ('s', 'd1', 'u', 'run-1', 'act-1'), ('s', 'd2', 'u', 'run-2-new', 'act-2');
        """

    static func clear(_ invalidations: [DeviceTokenQueries.Invalidation], on client: PostgresClient) async throws {
        try await client.transaction { try DeviceTokenQueries.clear(invalidations, on: $0) }
    }

    static func devices(_ client: PostgresClient) async throws -> [String] {
        try await client.lines("""
            SELECT concat_ws(' ', device_id, coalesce(fcm_token, '-'), coalesce(push_to_start_token, '-')) FROM devices ORDER BY device_id
            """)
    }

    static func invalidations(_ client: PostgresClient) async throws -> [String] {
        try await client.lines("""
            SELECT concat_ws(' ', device_id, token_kind, old_value, reason, coalesce(stream_id, '-'), coalesce(user_id, '-'),
                             coalesce(activity_id, '-'))
            FROM countdown_token_invalidations ORDER BY device_id, token_kind
            """)
    }

    @Test func clearsOnlyATokenStillHeldAndRecordsIt() async throws {
        try await StoreDatabase.with(prefix: "store_tokens") { client in
            try await client.seed(Self.rows)
            try await Self.clear([
                .init(device: "d1", token: .fcm, value: "fcm-1", reason: "UNREGISTERED", stream: "s"),
                .init(device: "d2", token: .fcm, value: "fcm-2-old", reason: "UNREGISTERED", stream: "s"),
                .init(device: "d1", token: .pushToStart, value: "pts-1", reason: "BadDeviceToken", stream: nil),
                .init(device: "d1", token: .runtime, value: "run-1", reason: "Unregistered", stream: "s"),
                .init(device: "d2", token: .runtime, value: "run-2-old", reason: "Unregistered", stream: "s"),
                .init(device: "d2", token: .pushToStart, value: "", reason: "BadDeviceToken", stream: "s"),
            ], on: client)
            #expect(try await Self.devices(client) == ["d1 - -", "d2 fcm-2-new pts-2", "d3 same same"],
                    "a replaced token and an empty value clear nothing")
            #expect(try await client.lines("SELECT device_id || ' ' || live_activity_token FROM live_activity_sessions") == ["d2 run-2-new"])
            #expect(try await Self.invalidations(client) == [
                "d1 fcm fcm-1 UNREGISTERED s u -",
                "d1 push_to_start pts-1 BadDeviceToken - u -",
                "d1 runtime run-1 Unregistered s u act-1",
            ])
        }
    }

    @Test func eachKindClearsOnlyItsOwnColumn() async throws {
        try await StoreDatabase.with(prefix: "store_token_kinds") { client in
            try await client.seed(Self.rows)
            try await Self.clear([.init(device: "d3", token: .pushToStart, value: "same", reason: "BadDeviceToken", stream: nil)], on: client)
            #expect(try await Self.devices(client).last == "d3 same -")
            try await Self.clear([.init(device: "d3", token: .fcm, value: "same", reason: "UNREGISTERED", stream: nil)], on: client)
            #expect(try await Self.devices(client).last == "d3 - -")
            #expect(try await Self.invalidations(client) == ["d3 fcm same UNREGISTERED - u -", "d3 push_to_start same BadDeviceToken - u -"])
        }
    }

    @Test func aTokenRefusedTwiceIsRecordedOnce() async throws {
        try await StoreDatabase.with(prefix: "store_token_twice") { client in
            try await client.seed(Self.rows)
            let refusals: [DeviceTokenQueries.Invalidation] = [
                .init(device: "d1", token: .fcm, value: "fcm-1", reason: "UNREGISTERED", stream: "s"),
                .init(device: "d1", token: .fcm, value: "fcm-1", reason: "UNREGISTERED", stream: "t"),
                .init(device: "d1", token: .runtime, value: "run-1", reason: "Unregistered", stream: "s"),
                .init(device: "d1", token: .runtime, value: "run-1", reason: "Unregistered", stream: "s"),
            ]
            try await Self.clear(refusals, on: client)
            try await Self.clear(refusals, on: client)  // a repeated job: the tokens are gone already
            #expect(try await client.lines("SELECT token_kind FROM countdown_token_invalidations ORDER BY 1") == ["fcm", "runtime"])
        }
    }

    /// A device another user took over keeps its new owner's (empty) columns: the previous owner's cleared tokens,
    /// device and session alike, do not go back on it; the owner's own do.
    @Test func aRestoreLeavesADeviceThatChangedOwnerAlone() async throws {
        try await StoreDatabase.with(prefix: "store_token_owner") { client in
            try await client.seed(Self.rows + "INSERT INTO users (id, display_name) VALUES ('v', 'V');")
            try await Self.clear([
                .init(device: "d1", token: .fcm, value: "fcm-1", reason: "UNREGISTERED", stream: "s"),
                .init(device: "d1", token: .pushToStart, value: "pts-1", reason: "BadDeviceToken", stream: nil),
                .init(device: "d1", token: .runtime, value: "run-1", reason: "Unregistered", stream: "s"),
                .init(device: "d2", token: .fcm, value: "fcm-2-new", reason: "UNREGISTERED", stream: "s"),
            ], on: client)
            try await client.execute("UPDATE devices SET user_id = 'v' WHERE device_id = 'd1'")
            let since = TimeCutoff.ago(seconds: 3600)
            #expect(try await client.withConnection { try TokenInvalidationQueries.restorable(since: since, reason: nil, on: $0) }.count == 1)
            let report = try await client.transaction { try TokenInvalidationQueries.restore(since: since, reason: nil, on: $0) }
            #expect(report.restored == ["fcm": 1] && report.skippedChanged == 3, "\(report)")
            #expect(try await Self.devices(client) == ["d1 - -", "d2 fcm-2-new pts-2", "d3 same same"])
            #expect(try await client.lines("SELECT device_id FROM live_activity_sessions") == ["d2"], "no session back for the previous owner")
        }
    }

    /// The limit counts what would be restored, not the entries read: over it, nothing changes.
    @Test func aRestoreOverItsLimitDoesNothingAndSaysHowMany() async throws {
        try await StoreDatabase.with(prefix: "store_token_limit") { client in
            try await client.seed(Self.rows)
            try await Self.clear([
                .init(device: "d1", token: .fcm, value: "fcm-1", reason: "UNREGISTERED", stream: "s"),
                .init(device: "d1", token: .pushToStart, value: "pts-1", reason: "BadDeviceToken", stream: nil),
            ], on: client)
            let since = TimeCutoff.ago(seconds: 3600)
            let refused = try await client.transaction { try TokenInvalidationQueries.restore(since: since, reason: nil, limit: 1, on: $0) }
            #expect(refused.overLimit == 2 && refused.restored.isEmpty)
            #expect(try await Self.devices(client).first == "d1 - -")
            let done = try await client.transaction { try TokenInvalidationQueries.restore(since: since, reason: nil, limit: 2, on: $0) }
            #expect(done.restored == ["fcm": 1, "push_to_start": 1] && done.overLimit == nil)
        }
    }
}
