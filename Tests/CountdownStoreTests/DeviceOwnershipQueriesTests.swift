import CountdownStore
import Postgres
import Testing

/// The ownership rule decided inside the batched device write, the owner checks of the session writes, and the
/// expiry of devices that never had a user.
@Suite struct DeviceOwnershipQueriesTests {
    static func device(_ id: String, user: String?, fcm: String) -> DeviceOwnershipQueries.Item {
        DeviceOwnershipQueries.Item(registration: DeviceRegistration(deviceID: id, platform: "ios", fcmToken: fcm), userID: user)
    }

    @Test func oneBatchGivesEachRegistrationItsOwnOutcomeAndCommitsTheRest() async throws {
        try await StoreDatabase.with(prefix: "store_ownership_batch") { client in
            try await client.seed("""
                INSERT INTO users (id, display_name) VALUES ('u1', 'U1'), ('u2', 'U2');
                INSERT INTO streams (id, title, planned_start_at) VALUES ('s1', 'S', now() + interval '1 hour');
                INSERT INTO devices (device_id, user_id, platform, fcm_token) VALUES
                    ('d-linked', 'u1', 'ios', 'fcm-linked'), ('d-free', NULL, 'ios', 'fcm-free'), ('d-shared', 'u1', 'ios', 'fcm-shared');
                INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token) VALUES ('s1', 'd-shared', 'u1', 'aa');
                """)
            // Not in device id order: the store locks in that order and answers in the order given.
            let items = [
                Self.device("d-shared", user: "u2", fcm: "fcm-u2"), Self.device("d-free", user: nil, fcm: "fcm-free-2"),
                Self.device("d-new", user: nil, fcm: "fcm-new"), Self.device("d-linked", user: nil, fcm: "fcm-attacker"),
            ]
            let outcomes = try await client.withConnection { try DeviceOwnershipQueries.write(items, .upsert, on: $0) }
            #expect(outcomes == [.takenOver(previousUser: "u1", sessionsEnded: 1), .written, .written, .refused])
            #expect(try await client.lines("SELECT count(*)::text FROM live_activity_sessions WHERE device_id = 'd-shared'") == ["0"])
            #expect(try await client.lines("""
                SELECT concat_ws(' ', device_id, user_id, live_activity_token, reason) FROM countdown_retired_sessions
                """) == ["d-shared u1 aa takeover"])
            #expect(try await client.lines("""
                SELECT concat_ws(' ', device_id, coalesce(user_id, '-'), fcm_token) FROM devices ORDER BY device_id
                """) == ["d-free - fcm-free-2", "d-linked u1 fcm-linked", "d-new - fcm-new", "d-shared u2 fcm-u2"])
            let again = try await client.withConnection { try DeviceOwnershipQueries.write([items[0]], .upsert, on: $0) }
            #expect(again == [.written], "a repeat by the new owner changes nothing and takes nothing over")
        }
    }

    @Test func aPushToStartUpdateFollowsTheSameRule() async throws {
        try await StoreDatabase.with(prefix: "store_ownership_p2s") { client in
            try await client.seed("""
                INSERT INTO users (id, display_name) VALUES ('u1', 'U1');
                INSERT INTO devices (device_id, user_id, platform, fcm_token) VALUES ('d1', 'u1', 'ios', 'fcm');
                """)
            func update(_ id: String, user: String?) async throws -> DeviceUpsertOutcome? {
                let device = DeviceOwnershipQueries.Item(
                    registration: DeviceRegistration(deviceID: id, platform: "ios", fcmToken: nil, pushToStartToken: "ab"), userID: user)
                return try await client.withConnection { try DeviceOwnershipQueries.write([device], .pushToStartUpdate, on: $0) }[0]
            }
            #expect(try await update("d1", user: nil) == .refused)
            #expect(try await client.lines("SELECT count(*)::text FROM devices WHERE push_to_start_token IS NOT NULL") == ["0"])
            #expect(try await update("d1", user: "u1") == .written)
            #expect(try await client.lines("SELECT push_to_start_token FROM devices") == ["ab"])
            #expect(try await update("missing", user: "u1") == nil)
        }
    }

    @Test func sessionWritesAnswerForTheDevicesOwnerOnly() async throws {
        try await StoreDatabase.with(prefix: "store_ownership_sessions") { client in
            try await client.seed("""
                INSERT INTO users (id, display_name) VALUES ('u1', 'U1'), ('u2', 'U2');
                INSERT INTO streams (id, title, planned_start_at) VALUES ('s1', 'S', now() + interval '1 hour');
                INSERT INTO devices (device_id, user_id, platform, fcm_token) VALUES ('d1', 'u1', 'ios', 'fcm');
                """)
            func register(_ stream: String, _ device: String, _ user: String) async throws -> SessionQueries.Registration {
                try await client.transaction {
                    try SessionQueries.register(stream: stream, device: device, user: user, token: "aa", activity: "act", on: $0)
                }
            }
            func remove(_ device: String, _ user: String) async throws -> DeviceOwnershipQueries.Refusal? {
                try await client.withConnection { try SessionQueries.removeOwn(stream: "s1", device: device, user: user, on: $0) }
            }
            #expect(try await register("s1", "d1", "u2") == .refused(.notYours))
            #expect(try await register("s1", "nowhere", "u2") == .refused(.notYours), "a missing device is answered as another's")
            #expect(try await register("s1", "d1", "ghost") == .refused(.unknownUser))
            #expect(try await register("gone", "d1", "u1") == .streamMissing)
            #expect(try await register("s1", "d1", "u1") == .registered)
            #expect(try await register("s1", "d1", "u1") == .registered, "idempotent")
            #expect(try await client.lines("SELECT concat_ws(' ', stream_id, device_id, user_id, live_activity_token, activity_id) FROM live_activity_sessions")
                    == ["s1 d1 u1 aa act"])

            #expect(try await remove("d1", "u2") == .notYours)
            #expect(try await remove("d1", "ghost") == .unknownUser)
            #expect(try await client.lines("SELECT count(*)::text FROM live_activity_sessions") == ["1"], "refused removals delete nothing")
            #expect(try await remove("d1", "u1") == nil)
            #expect(try await remove("d1", "u1") == nil, "nothing left to remove is no refusal")
            #expect(try await client.lines("SELECT count(*)::text FROM live_activity_sessions") == ["0"])
        }
    }

    @Test func onlyOldDevicesThatNeverHadAUserExpireInBatches() async throws {
        try await StoreDatabase.with(prefix: "store_ownership_expire") { client in
            try await client.seed("""
                INSERT INTO users (id, display_name) VALUES ('u1', 'U1');
                INSERT INTO devices (device_id, user_id, platform, fcm_token) VALUES
                    ('old-1', NULL, 'ios', 'f'), ('old-2', NULL, 'ios', 'f'), ('old-3', NULL, 'ios', 'f'), ('fresh', NULL, 'ios', 'f'),
                    ('owned', 'u1', 'ios', 'f'), ('unlinked', 'u1', 'ios', 'f');
                UPDATE devices SET user_id = NULL WHERE device_id = 'unlinked';
                UPDATE devices SET updated_at = now() - interval '2 hours' WHERE device_id <> 'fresh';
                """)
            func expire(limit: Int) async throws -> Int {
                try await client.withConnection { try DeviceOwnershipQueries.expireOwnerless(unwrittenFor: 3600, limit: limit, on: $0) }
            }
            #expect(try await expire(limit: 2) == 2)
            #expect(try await expire(limit: 2) == 1)
            #expect(try await expire(limit: 2) == 0)
            #expect(try await client.lines("SELECT device_id FROM devices ORDER BY device_id") == ["fresh", "owned", "unlinked"])
        }
    }
}
