import Foundation
import Postgres

extension CountdownSystem {
    // MARK: Writing rows as the backend would

    public func execute(_ sql: String, _ parameters: [(any PostgresEncodable)?] = []) async throws {
        _ = try await db.execute(sql, parameters)
    }

    public func query(_ sql: String, _ parameters: [(any PostgresEncodable)?] = []) async throws -> [PostgresRow] {
        try await db.query(sql, parameters)
    }

    public func user(_ id: String, name: String? = nil, locale: String = "tr") async throws {
        try await execute("INSERT INTO users (id, display_name, locale) VALUES ($1, $2, $3)", [id, name ?? id.capitalized, locale])
    }

    /// An iOS device with both tokens unless told otherwise; tokens derive from the device id.
    public func device(_ id: String, user: String?, platform: String = "ios", fcm: Bool = true, pushToStart: Bool = true, locale: String? = nil) async throws {
        try await execute("""
            INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token, locale) VALUES ($1, $2, $3, $4, $5, $6)
            """, [id, user, platform, fcm ? Self.fcmToken(id) : nil, pushToStart ? Self.pushToStartToken(id) : nil, locale])
    }

    /// A scheduled stream starting `seconds` from the database's now, with its creator and guests.
    public func stream(_ id: String, title: String? = nil, startsIn seconds: Double, creator: String, guests: [String] = []) async throws {
        try await db.transaction { connection in
            try connection.execute("INSERT INTO streams (id, title, planned_start_at) VALUES ($1, $2, now() + make_interval(secs => $3))",
                                   [id, title ?? "Stream \(id)", seconds])
            try connection.execute("INSERT INTO stream_participants (stream_id, user_id, role, position) VALUES ($1, $2, 'creator', 0)", [id, creator])
            for (index, guest) in guests.enumerated() {
                try connection.execute("INSERT INTO stream_participants (stream_id, user_id, role, position) VALUES ($1, $2, 'guest', $3)",
                                       [id, guest, index + 1])
            }
        }
    }

    public func session(stream: String, device: String, user: String?) async throws {
        try await execute("""
            INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token) VALUES ($1, $2, $3, $4)
            """, [stream, device, user, Self.sessionToken(stream, device)])
    }

    public func plannedStart(_ stream: String) async throws -> Date {
        try await query("SELECT planned_start_at FROM streams WHERE id = $1", [stream])[0].decode("planned_start_at")
    }

    public static func fcmToken(_ device: String) -> String { "fcm-" + device }
    public static func pushToStartToken(_ device: String) -> String { hex("pts-" + device) }
    public static func sessionToken(_ stream: String, _ device: String) -> String { hex("session-\(stream)-\(device)") }

    private static func hex(_ text: String) -> String {
        Array(text.utf8).map { String(format: "%02x", $0) }.joined()
    }

    // MARK: Reading the database

    /// The database's clock now (`clock_timestamp()`), in epoch seconds.
    public func databaseNow() async throws -> Double {
        try await query("SELECT extract(epoch FROM clock_timestamp())::float8 AS now")[0].decode("now")
    }

    /// Outbox rows the relay has not taken yet.
    public func outboxBacklog() async throws -> Int {
        try await query("SELECT count(*) AS n FROM countdown_outbox")[0].decode("n")
    }

    /// Waits until the outbox is empty (polled every 200 ms).
    public func waitOutboxDrained(timeout: Duration) async throws {
        try await waitUntil(timeout: timeout, every: .milliseconds(200), "the outbox relay to drain") {
            try await self.outboxBacklog() == 0
        }
    }
}
