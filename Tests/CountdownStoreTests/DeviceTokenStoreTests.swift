import CountdownDomain
import CountdownStore
import Postgres
import Testing

/// A refused token is cleared only where the device (or session) still holds that same value, each kind in its own
/// column, and every cleared value is recorded in `countdown_token_invalidations` so it can be restored.
@Suite struct DeviceTokenStoreTests {
    static let rows = """
        INSERT INTO users (id, display_name) VALUES ('u', 'U');
        INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token) VALUES
            ('d1', 'u', 'ios', 'fcm-1', 'pts-1'), ('d2', 'u', 'ios', 'fcm-2-new', 'pts-2'), ('d3', 'u', 'ios', 'same', 'same');
        INSERT INTO streams (id, title, planned_start_at) VALUES ('s', 'S', now() + interval '1 hour');
        INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token, activity_id) VALUES
            ('s', 'd1', 'u', 'run-1', 'act-1'), ('s', 'd2', 'u', 'run-2-new', 'act-2');
        """

    static func clear(_ invalidations: [DeviceTokenStore.Invalidation], on client: PostgresClient) async throws {
        try await client.transaction { try DeviceTokenStore.clear(invalidations, on: $0) }
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
                "d1 fcm fcm-1 UNREGISTERED s - -",
                "d1 push_to_start pts-1 BadDeviceToken - - -",
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
            #expect(try await Self.invalidations(client) == ["d3 fcm same UNREGISTERED - - -", "d3 push_to_start same BadDeviceToken - - -"])
        }
    }

    @Test func aTokenRefusedTwiceIsRecordedOnce() async throws {
        try await StoreDatabase.with(prefix: "store_token_twice") { client in
            try await client.seed(Self.rows)
            let refusals: [DeviceTokenStore.Invalidation] = [
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
}
