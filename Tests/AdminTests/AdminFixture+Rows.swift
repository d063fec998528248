import Foundation
import Postgres

/// Rows as the existing backend writes them, and reads of what the commands changed.
extension AdminFixture {
    @discardableResult
    func execute(_ sql: String, _ parameters: [(any PostgresEncodable)?] = []) async throws -> Int {
        try await db.execute(sql, parameters)
    }

    func query(_ sql: String, _ parameters: [(any PostgresEncodable)?] = []) async throws -> [PostgresRow] {
        try await db.query(sql, parameters)
    }

    /// Users (display name = id capitalised), each with one iOS device `<user>-phone` holding both tokens.
    func people(_ users: [String]) async throws {
        for user in users {
            try await execute("INSERT INTO users (id, display_name) VALUES ($1, $2) ON CONFLICT DO NOTHING", [user, user.capitalized])
            try await execute("""
                INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token)
                VALUES ($1, $2, 'ios', 'fcm-' || $1, md5($1)) ON CONFLICT DO NOTHING
                """, [Self.phone(user), user])
        }
    }

    /// A scheduled stream `seconds` after the database's now; the first of `people` creates it, the others are guests.
    func stream(_ id: String, startsIn seconds: Double, people: [String]) async throws {
        try await self.people(people)
        try await execute("INSERT INTO streams (id, title, planned_start_at) VALUES ($1, $2, now() + make_interval(secs => $3))",
                          [id, "Stream \(id)", seconds])
        for (position, user) in people.enumerated() {
            try await execute("INSERT INTO stream_participants (stream_id, user_id, role, position) VALUES ($1, $2, $3, $4)",
                              [id, user, position == 0 ? "creator" : "guest", position])
        }
    }

    /// A running Live Activity of `user`'s phone for `stream`; its token ends in `sessionTokenTail`.
    func session(_ stream: String, user: String) async throws {
        try await execute("""
            INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token) VALUES ($1, $2, $3, $4)
            """, [stream, Self.phone(user), user, "activity-\(stream)-\(user)-" + Self.sessionTokenTail])
    }

    func reminder(_ stream: String, user: String, status: String = "active") async throws {
        try await execute("INSERT INTO stream_reminders (stream_id, user_id, status) VALUES ($1, $2, $3)", [stream, user, status])
    }

    func status(of stream: String) async throws -> String {
        try await query("SELECT status FROM streams WHERE id = $1", [stream])[0].decode("status")
    }

    func plannedStart(of stream: String) async throws -> Date {
        try await query("SELECT planned_start_at FROM streams WHERE id = $1", [stream])[0].decode("planned_start_at")
    }

    func count(_ sql: String, _ parameters: [(any PostgresEncodable)?] = []) async throws -> Int {
        try await query("SELECT count(*) AS n FROM (\(sql)) AS counted", parameters)[0].decode("n")
    }

    static func phone(_ user: String) -> String { "\(user)-phone" }
    /// The last eight characters of every session token, the only part `show` may print.
    static let sessionTokenTail = "a1b2c3d4"
}
