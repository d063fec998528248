import CountdownAPI
import CountdownStore
import Foundation
import Postgres
import TestSupport

/// A migrated database of the test's own with the API on top, dropped afterwards.
struct DatabaseFixture {
    let database: TestDatabase
    let client: PostgresClient
    let api: TestAPI

    /// Runs `body` against a fresh migrated database and drops it afterwards, whatever happens.
    static func with(_ body: (DatabaseFixture) async throws -> Void) async throws {
        let database = try await TestDatabase.create(prefix: "api")
        let client = PostgresClient(configuration: database.configuration, maxConnections: 4)
        do {
            _ = try await Migrator().migrate(client)
            let fixture = DatabaseFixture(database: database, client: client, api: try TestAPI(store: PostgresAPIStore(database: client)))
            try await body(fixture)
        } catch {
            client.close()
            try? await database.drop()
            throw error
        }
        client.close()
        try await database.drop()
    }

    func sql(_ statement: String, _ parameters: [(any PostgresEncodable)?] = []) async throws {
        try await client.execute(statement, parameters)
    }

    func rows(_ statement: String, _ parameters: [(any PostgresEncodable)?] = []) async throws -> [PostgresRow] {
        try await client.query(statement, parameters)
    }

    func count(_ statement: String, _ parameters: [(any PostgresEncodable)?] = []) async throws -> Int {
        try await rows(statement, parameters).first?.decode(0, as: Int.self) ?? -1
    }

    /// Outbox rows of `topic` so far.
    func outbox(_ topic: String) async throws -> [(stream: String?, user: String?, device: String?)] {
        try await rows("SELECT stream_id, user_id, device_id FROM countdown_outbox WHERE topic = $1 ORDER BY id", [topic]).map {
            (try $0.decode("stream_id", as: String?.self), try $0.decode("user_id", as: String?.self), try $0.decode("device_id", as: String?.self))
        }
    }

    /// Users, and a scheduled stream an hour ahead created by `creator` with `guests`.
    func seed(users: [String], stream: String? = nil, creator: String? = nil, guests: [String] = []) async throws {
        for user in users {
            try await sql("INSERT INTO users (id, display_name) VALUES ($1, $2)", [user, "User \(user)"])
        }
        guard let stream else { return }
        try await sql("INSERT INTO streams (id, title, planned_start_at) VALUES ($1, 'Title', now() + interval '1 hour')", [stream])
        if let creator {
            try await sql("INSERT INTO stream_participants (stream_id, user_id, role) VALUES ($1, $2, 'creator')", [stream, creator])
        }
        for (position, guest) in guests.enumerated() {
            try await sql("INSERT INTO stream_participants (stream_id, user_id, role, position) VALUES ($1, $2, 'guest', $3)",
                          [stream, guest, position + 1])
        }
    }
}
