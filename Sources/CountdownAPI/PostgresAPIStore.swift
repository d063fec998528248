import CountdownCommands
import Postgres

/// The `APIStore` over the contract tables. Each call is one statement or one short transaction; the schema's
/// triggers turn the rows written here into outbox entries for the workers.
public final class PostgresAPIStore: APIStore {
    public let database: PostgresClient
    private let devices: DeviceUpsertBatcher

    /// - Parameter batchWriters: device registrations are group-committed by up to this many concurrent batches.
    public init(database: PostgresClient, batchWriters: Int = 2) {
        self.database = database
        devices = DeviceUpsertBatcher(maxWriters: batchWriters, write: { unordered in
            let items = unordered.sorted { $0.registration.deviceID < $1.registration.deviceID }  // lock order: device id
            let outcomes = try await database.withConnection { try DeviceOwnership.write(items, .upsert, on: $0) }
            let byDevice = Dictionary(uniqueKeysWithValues: zip(items.map(\.registration.deviceID), outcomes))
            return unordered.map { byDevice[$0.registration.deviceID].flatMap { $0 } ?? .written }
        }, writeOne: { item in
            try await database.withConnection { try DeviceOwnership.write([item], .upsert, on: $0) }.first.flatMap { $0 } ?? .written
        })
    }

    public func registerDevice(_ registration: DeviceRegistration, userID: String?) async throws -> DeviceUpsertOutcome {
        let r = registration
        guard r.isPushToStartUpdate else { return try await run { try await devices.submit(r, userID: userID) } }
        let item = DeviceUpsertBatcher.Item(registration: r, userID: userID)
        let outcome = try await run {
            try await database.withConnection { try DeviceOwnership.write([item], .pushToStartUpdate, on: $0) }.first.flatMap { $0 }
        }
        guard let outcome else {
            throw APIError(.deviceNotFound, "no device \(r.deviceID); register it with token (its FCM token) first", field: "deviceId")
        }
        return outcome
    }

    public func registerSession(_ session: SessionRegistration, userID: String) async throws {
        let s = session
        let outcome = try await run {
            try await database.transaction { connection -> APIError? in
                if let refusal = try Self.ownership(of: s.deviceID, userID: userID, on: connection, lock: true) { return refusal }
                guard try connection.query("SELECT 1 FROM streams WHERE id = $1", [s.streamID]).first != nil else {
                    return APIError(.streamNotFound, "no stream \(s.streamID)", field: "streamId")
                }
                try connection.execute(SQL.upsertSession, [s.streamID, s.deviceID, userID, s.liveActivityToken, s.activityID])
                return nil
            }
        }
        if let outcome { throw outcome }
    }

    public func removeSession(streamID: String, deviceID: String, userID: String) async throws {
        let refusal = try await run {
            try await database.withConnection { connection -> APIError? in
                let removed = try connection.execute(SQL.deleteOwnSession, [streamID, deviceID, userID])
                if removed > 0 { return nil }
                return try Self.ownership(of: deviceID, userID: userID, on: connection, lock: false)
            }
        }
        if let refusal { throw refusal }
    }

    public func cancelStream(id: String, caller: Caller) async throws -> StreamCommands.CancelReport {
        let rows = try await run { try await database.query(SQL.streamAndCreator, [id, caller.userID]) }
        // An admin token whose sub is no user (a deleted or made-up account) cancels nothing.
        guard try rows.first?.decode("user_known", as: Bool.self) == true else { throw Self.unknownUser(caller.userID) }
        guard let row = rows.first, try row.decode("stream_known", as: Bool.self) else {
            throw APIError(.streamNotFound, "no stream \(id)", field: "id")
        }
        let isCreator = try row.decode("is_creator", as: Bool.self)
        guard caller.isAdmin || isCreator else {
            throw APIError(.forbidden, "only the stream's creator or an admin may cancel it")
        }
        switch try await run({ try await StreamCommands.cancel(id, database: database) }) {
        case .cancelled(let report): return report
        case .notFound: throw APIError(.streamNotFound, "no stream \(id)", field: "id")
        case .alreadyEnded(let status): throw APIError(.streamAlreadyEnded, "the stream is already \(status.rawValue)")
        }
    }

    public func ping() async throws {
        _ = try await database.query("SELECT 1", retryingOnConnectionLoss: true)
    }

    /// Why `userID` may not use the device, or nil when it is theirs. A device linked to someone else and one that
    /// does not exist get the same answer (404), so nobody learns which device ids are in use.
    private static func ownership(of deviceID: String, userID: String, on connection: PostgresConnection, lock: Bool) throws -> APIError? {
        let sql = "SELECT user_id FROM devices WHERE device_id = $1" + (lock ? " FOR SHARE OF devices" : "")
        let owner = try connection.query(sql, [deviceID]).first.map { try $0.decode("user_id", as: String?.self) }
        if owner == userID { return nil }
        guard try connection.query("SELECT 1 FROM users WHERE id = $1", [userID]).first != nil else { return unknownUser(userID) }
        return notYours(deviceID)
    }

    /// The answer for a device that is not the caller's, whether it exists or not.
    static func notYours(_ deviceID: String) -> APIError {
        APIError(.deviceNotFound, "no device \(deviceID) of yours; register it with POST /notifications/device-token and your bearer token first",
                 field: "deviceId")
    }

    static func unknownUser(_ userID: String) -> APIError {
        APIError(.unknownUser, "user \(userID.prefix(64)) is not known here; nothing was linked")
    }

    /// Runs database work, translating what the API answers specially: a lost database or a session time
    /// limit (503) and a caller missing from `users` (403).
    private func run<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as PostgresError {
            if error.isConnectionLoss || error.code == .closed { throw APIError(.unavailable, "PostgreSQL is not reachable") }
            if error.isTimeLimit {
                throw APIError(.timeout, error.isLockTimeout ? "the row is busy (locked by another writer); it is safe to repeat"
                    : "the database did not answer in time; it is safe to repeat")
            }
            if error.sqlState == "23503", error.constraint?.hasSuffix("user_id_fkey") == true {
                throw APIError(.unknownUser, "the token's user is not known here; nothing was linked")
            }
            if error.sqlState == "23503", error.constraint?.hasSuffix("stream_id_fkey") == true {
                throw APIError(.streamNotFound, "the stream no longer exists", field: "streamId")
            }
            throw error
        }
    }

    private enum SQL {
        static let upsertSession = """
            INSERT INTO live_activity_sessions AS s (stream_id, device_id, user_id, live_activity_token, activity_id)
            VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (stream_id, device_id) DO UPDATE SET
                user_id = EXCLUDED.user_id, live_activity_token = EXCLUDED.live_activity_token, activity_id = EXCLUDED.activity_id
            WHERE (s.user_id, s.live_activity_token, s.activity_id) IS DISTINCT FROM
                  (EXCLUDED.user_id, EXCLUDED.live_activity_token, EXCLUDED.activity_id)
            """

        static let deleteOwnSession = """
            DELETE FROM live_activity_sessions
            WHERE stream_id = $1 AND device_id = $2
              AND EXISTS (SELECT 1 FROM devices WHERE device_id = $2 AND user_id = $3)
            """

        static let streamAndCreator = """
            SELECT EXISTS (SELECT 1 FROM users WHERE id = $2) AS user_known,
                   EXISTS (SELECT 1 FROM streams WHERE id = $1) AS stream_known,
                   EXISTS (SELECT 1 FROM stream_participants
                           WHERE stream_id = $1 AND user_id = $2 AND role = 'creator') AS is_creator
            """
    }
}
