import Foundation
import CountdownDomain
import Postgres
import PushPayloads

/// Reads streams as the payload builders see them (`StreamSnapshotRow`).
public enum StreamSnapshotQueries {
    /// Reads the stream, its creator and guests (ordered by position) and `now()`; nil when the stream is gone.
    /// Throws when it cannot be read.
    public static func load(_ streamID: String, on connection: PostgresConnection) throws -> StreamSnapshotRow? {
        let loaded = try loadReadable([streamID], on: connection)
        if let (id, error) = loaded.unreadable.first {
            throw StoreError(.rowData, context: "read stream \(id): " + StoreError.reason(of: error))
        }
        return loaded.rows[streamID]
    }

    /// `load` with the stream's `viewerCount` filled in; nil when the stream is gone or not `wanted` (then not counted).
    /// With `leading`, only the participants the payloads show are read (`loadLeading`).
    public static func loadCounted(_ streamID: String, leading: Bool = false, if wanted: (StreamSnapshotRow) -> Bool = { _ in true },
                                   on connection: PostgresConnection) throws -> StreamSnapshotRow? {
        let loaded = leading ? try loadLeading(streamID, on: connection) : try load(streamID, on: connection)
        guard var stream = loaded, wanted(stream) else { return nil }
        stream.viewerCount = try ViewerCountQuery.load([streamID], on: connection)[streamID] ?? 0
        return stream
    }

    /// `load` for several streams in two statements (streams that are gone are missing from the result), each read
    /// on its own: a stream that cannot be read (an undecodable value) is returned with its error instead of failing
    /// the others.
    public static func loadReadable(_ streamIDs: [String], on connection: PostgresConnection) throws
        -> (rows: [String: StreamSnapshotRow], unreadable: [String: any Error]) {
        let ids = PostgresTextArray(streamIDs)
        let streams = try connection.query(
            "SELECT id, title, status, planned_start_at, now() AS now FROM streams WHERE id = ANY($1::text[])", [ids])
        guard !streams.isEmpty else { return ([:], [:]) }
        let participants = try connection.query("""
            SELECT p.stream_id, p.user_id, p.role, u.display_name
            FROM stream_participants p JOIN users u ON u.id = p.user_id
            WHERE p.stream_id = ANY($1::text[])
            ORDER BY p.stream_id, (p.role <> 'creator'), p.position, p.user_id
            """, [ids])
        let people = try Self.people(participants)
        var rows: [String: StreamSnapshotRow] = [:]
        var unreadable: [String: any Error] = [:]
        for stream in streams {
            let id = try stream.decode("id", as: String.self)
            do {
                let entry = people[id] ?? ("", [], [:])
                let status = StreamStatus(rawValue: try stream.decode("status", as: String.self)) ?? .scheduled
                let snapshot = StreamSnapshot(
                    id: id, title: try stream.decode("title", as: String.self),
                    plannedStartAt: try stream.decode("planned_start_at", as: Date.self), creatorName: entry.creator, guestNames: entry.guests)
                rows[id] = StreamSnapshotRow(snapshot: snapshot, status: status, now: try stream.decode("now", as: Date.self), roles: entry.roles)
            } catch {
                unreadable[id] = error
            }
        }
        return (rows, unreadable)
    }

    /// `load` reading only the stream's first participants (creator first, then the guests by position): the names
    /// that decide every payload (`PushPayloadBuilder.decidingNameCount`), so a stream with 100,000 guests costs what
    /// one with a thousand does. `roles` holds only the participants read (`roles(of:users:)` adds others). Reads every
    /// participant (`load`) when blank names leave too few among the first to decide.
    public static func loadLeading(_ streamID: String, on connection: PostgresConnection) throws -> StreamSnapshotRow? {
        let streams = try connection.query(
            "SELECT id, title, status, planned_start_at, now() AS now FROM streams WHERE id = $1", [streamID])
        guard let stream = streams.first else { return nil }
        let limit = 2 * PushPayloadBuilder.decidingNameCount
        // The first participants by the primary key's stream range, then their names: the sort and the join see the
        // stream's participant rows but join only `limit` users.
        let participants = try connection.query("""
            SELECT p.stream_id, p.user_id, p.role, u.display_name
            FROM (SELECT stream_id, user_id, role, position FROM stream_participants WHERE stream_id = $1
                  ORDER BY (role <> 'creator'), position, user_id LIMIT $2) p
            JOIN users u ON u.id = p.user_id
            ORDER BY (p.role <> 'creator'), p.position, p.user_id
            """, [streamID, limit])
        let entry = try Self.people(participants)[streamID] ?? ("", [], [:])
        let status = StreamStatus(rawValue: try stream.decode("status", as: String.self)) ?? .scheduled
        let snapshot = StreamSnapshot(
            id: streamID, title: try stream.decode("title", as: String.self),
            plannedStartAt: try stream.decode("planned_start_at", as: Date.self), creatorName: entry.creator, guestNames: entry.guests)
        if participants.count == limit && !PushPayloadBuilder.leadingNamesDecide(snapshot) {
            return try load(streamID, on: connection)
        }
        return StreamSnapshotRow(snapshot: snapshot, status: status, now: try stream.decode("now", as: Date.self), roles: entry.roles)
    }

    /// The roles of `users` in the stream (those who are participants).
    public static func roles(of streamID: String, users: [String], on connection: PostgresConnection) throws -> [String: ParticipantRole] {
        guard !users.isEmpty else { return [:] }
        let rows = try connection.query("SELECT user_id, role FROM stream_participants WHERE stream_id = $1 AND user_id = ANY($2::text[])",
                                        [streamID, PostgresTextArray(users)])
        return Dictionary(uniqueKeysWithValues: try rows.map { row in
            (try row.decode("user_id", as: String.self), ParticipantRole(rawValue: try row.decode("role", as: String.self)) ?? .guest)
        })
    }

    /// Participant rows (stream_id, user_id, role, display_name; creators first, then by position) folded per stream:
    /// the first creator's name, every other name in order, the role of each user.
    private static func people(_ participants: PostgresRows) throws
        -> [String: (creator: String, guests: [String], roles: [String: ParticipantRole])] {
        var people: [String: (creator: String, guests: [String], roles: [String: ParticipantRole])] = [:]
        for row in participants {
            let streamID = try row.decode("stream_id", as: String.self)
            let role = ParticipantRole(rawValue: try row.decode("role", as: String.self)) ?? .guest
            let name = try row.decode("display_name", as: String.self)
            var entry = people[streamID] ?? ("", [], [:])
            entry.roles[try row.decode("user_id", as: String.self)] = role
            if role == .creator && entry.creator.isEmpty { entry.creator = name } else { entry.guests.append(name) }
            people[streamID] = entry
        }
        return people
    }
}
