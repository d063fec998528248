import CountdownStore
import Postgres
import Testing

/// Sessions per activity (SPEC 12.1): `live_activity_sessions` holds a device's newest activity of a stream and
/// `countdown_activity_sessions` the older ones; every one of them is a session of the fan-out.
@Suite struct ActivitySessionStoreTests {
    static let rows = """
        INSERT INTO users (id, display_name, locale) VALUES ('u', 'U', 'en');
        INSERT INTO devices (device_id, user_id, platform, fcm_token) VALUES ('phone', 'u', 'ios', 'fcm-phone'), ('tablet', 'u', 'ios', 'fcm-tablet');
        INSERT INTO streams (id, title, planned_start_at) VALUES ('s', 'S', now() + interval '30 minutes');
        """

    static func register(_ token: String, activity: String?, device: String = "phone", on client: PostgresClient) async throws {
        let outcome = try await client.transaction {
            try SessionQueries.register(stream: "s", device: device, user: "u", token: token, activity: activity, on: $0)
        }
        #expect(outcome == .registered)
    }

    /// Every activity as "table device activity token", the newest first per device.
    static func activities(_ client: PostgresClient) async throws -> [String] {
        try await client.lines("""
            SELECT concat_ws(' ', 'newest', device_id, coalesce(activity_id, '-'), live_activity_token) FROM live_activity_sessions
            UNION ALL
            SELECT concat_ws(' ', 'older', device_id, activity_id, live_activity_token) FROM countdown_activity_sessions
            ORDER BY 1
            """)
    }

    static func remove(_ activity: String?, on client: PostgresClient) async throws {
        let refusal = try await client.transaction { try SessionQueries.removeOwn(stream: "s", device: "phone", user: "u", activity: activity, on: $0) }
        #expect(refusal == nil)
    }

    @Test func aSecondActivityKeepsTheFirstAndANewTokenReplacesOnlyItsActivitys() async throws {
        try await StoreDatabase.with(prefix: "store_activity_register") { client in
            try await client.seed(Self.rows)
            try await Self.register("run-a", activity: "A", on: client)
            try await Self.register("run-b", activity: "B", on: client)
            #expect(try await Self.activities(client) == ["newest phone B run-b", "older phone A run-a"])

            try await Self.register("run-a2", activity: "A", on: client)
            try await Self.register("run-b2", activity: "B", on: client)
            #expect(try await Self.activities(client) == ["newest phone B run-b2", "older phone A run-a2"], "a new token replaces its activity's")

            let sessions = try await client.withConnection { try SessionQueries.sessions("s", devices: nil, on: $0) }
            #expect(sessions.map { "\($0.device) \($0.activity) \($0.activityToken)" }.sorted() == ["phone A run-a2", "phone B run-b2"])

            try await Self.register("run-x", activity: nil, on: client)
            #expect(try await Self.activities(client) == ["newest phone - run-x", "older phone A run-a2"],
                    "without an activity id the newest is replaced, as before")
        }
    }

    @Test func deletingOneActivityLeavesTheOthersAndWithoutAnIdRemovesAll() async throws {
        try await StoreDatabase.with(prefix: "store_activity_delete") { client in
            try await client.seed(Self.rows)
            for (token, activity) in [("run-a", "A"), ("run-b", "B"), ("run-c", "C")] { try await Self.register(token, activity: activity, on: client) }
            try await Self.register("run-t", activity: "T", device: "tablet", on: client)

            try await Self.remove("A", on: client)
            #expect(try await Self.activities(client) == ["newest phone C run-c", "newest tablet T run-t", "older phone B run-b"])
            try await Self.remove("C", on: client)
            #expect(try await Self.activities(client) == ["newest phone B run-b", "newest tablet T run-t"],
                    "the newest older activity takes the removed newest one's place")
            try await Self.remove("nothing", on: client)
            try await Self.remove("B", on: client)
            #expect(try await Self.activities(client) == ["newest tablet T run-t"])

            for (token, activity) in [("run-a", "A"), ("run-b", "B")] { try await Self.register(token, activity: activity, on: client) }
            try await Self.remove(nil, on: client)
            #expect(try await Self.activities(client) == ["newest tablet T run-t"], "without an activity id every activity of the device goes")
        }
    }

    @Test func anEndedNewestActivityHandsItsRowToTheNextOne() async throws {
        try await StoreDatabase.with(prefix: "store_activity_end") { client in
            try await client.seed(Self.rows)
            try await Self.register("run-a", activity: "A", on: client)
            try await Self.register("run-b", activity: "B", on: client)
            let all = try await client.withConnection { try SessionQueries.sessions("s", devices: nil, on: $0) }
            let newest = all.filter { $0.activity == "B" }
            #expect(try await client.transaction { try SessionQueries.delete("s", newest, on: $0) } == 1)
            #expect(try await Self.activities(client) == ["newest phone A run-a"])
            #expect(try await client.transaction { try SessionQueries.delete("s", all, on: $0) } == 1)
            #expect(try await Self.activities(client) == [])

            // An older activity left without its device's row (its newest went with a refused token) gets it back
            // when the end claims the device.
            try await Self.register("run-a", activity: "A", on: client)
            try await Self.register("run-b", activity: "B", on: client)
            try await client.execute("DELETE FROM live_activity_sessions")
            try await client.withConnection { try SessionQueries.adoptOrphans("s", device: nil, on: $0) }
            #expect(try await Self.activities(client) == ["newest phone A run-a"])
        }
    }
}
