import Foundation
import Postgres
import PushPayloads

/// A stream as the payload builders need it, plus PostgreSQL's `now()` and its status.
struct StreamSnapshotRow: Sendable {
    var snapshot: StreamSnapshot
    var status: StreamStatus
    var now: Date
    /// Role per participant user id.
    var roles: [String: ParticipantRole]
}

enum StreamSnapshotQuery {
    /// Reads the stream, its creator and guests (ordered by position) and `now()`; nil when the stream is gone.
    static func load(_ streamID: String, on connection: PostgresConnection) throws -> StreamSnapshotRow? {
        let streams = try connection.query(
            "SELECT id, title, status, planned_start_at, now() AS now FROM streams WHERE id = $1", [streamID])
        guard let stream = streams.first else { return nil }
        let participants = try connection.query("""
            SELECT p.user_id, p.role, u.display_name
            FROM stream_participants p JOIN users u ON u.id = p.user_id
            WHERE p.stream_id = $1
            ORDER BY (p.role <> 'creator'), p.position, p.user_id
            """, [streamID])
        var creator = ""
        var guests: [String] = []
        var roles: [String: ParticipantRole] = [:]
        for row in participants {
            let role = ParticipantRole(rawValue: try row.decode("role", as: String.self)) ?? .guest
            let name = try row.decode("display_name", as: String.self)
            roles[try row.decode("user_id", as: String.self)] = role
            if role == .creator && creator.isEmpty { creator = name } else { guests.append(name) }
        }
        let status = StreamStatus(rawValue: try stream.decode("status", as: String.self)) ?? .scheduled
        let snapshot = StreamSnapshot(
            id: try stream.decode("id", as: String.self), title: try stream.decode("title", as: String.self),
            plannedStartAt: try stream.decode("planned_start_at", as: Date.self), creatorName: creator, guestNames: guests)
        return StreamSnapshotRow(snapshot: snapshot, status: status, now: try stream.decode("now", as: Date.self), roles: roles)
    }
}
