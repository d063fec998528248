import Foundation
import CountdownDomain
import Postgres
import PushPayloads

/// Reads streams as the payload builders see them (`StreamSnapshotRow`).
public enum StreamSnapshotQueries {
    /// Reads the stream, its creator and guests (ordered by position) and `now()`; nil when the stream is gone.
    public static func load(_ streamID: String, on connection: PostgresConnection) throws -> StreamSnapshotRow? {
        try load([streamID], on: connection)[streamID]
    }

    /// `load` with the stream's `viewerCount` filled in; nil when the stream is gone or not `wanted` (then not counted).
    public static func loadCounted(_ streamID: String, if wanted: (StreamSnapshotRow) -> Bool = { _ in true },
                                   on connection: PostgresConnection) throws -> StreamSnapshotRow? {
        guard var stream = try load(streamID, on: connection), wanted(stream) else { return nil }
        stream.viewerCount = try ViewerCountQuery.load([streamID], on: connection)[streamID] ?? 0
        return stream
    }

    /// `load` for several streams in two statements; streams that are gone are missing from the result. Throws when
    /// one of them cannot be read.
    public static func load(_ streamIDs: [String], on connection: PostgresConnection) throws -> [String: StreamSnapshotRow] {
        let loaded = try loadReadable(streamIDs, on: connection)
        if let (id, error) = loaded.unreadable.first {
            throw StoreError(.rowData, context: "read stream \(id): " + StoreError.reason(of: error))
        }
        return loaded.rows
    }

    /// `load` for several streams, each read on its own: a stream that cannot be read (an undecodable value) is
    /// returned with its error instead of failing the others.
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
}
