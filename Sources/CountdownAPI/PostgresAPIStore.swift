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
            try await database.execute(SQL.upsertDevices, [
                PostgresTextArray(items.map(\.registration.deviceID)), PostgresTextArray(items.map(\.userID)),
                PostgresTextArray(items.map(\.registration.platform)), PostgresTextArray(items.map(\.registration.fcmToken)),
                PostgresTextArray(items.map(\.registration.pushToStartToken)), PostgresTextArray(items.map(\.registration.timezone)),
                PostgresTextArray(items.map(\.registration.locale)),
            ])
        }, writeOne: { item in
            let r = item.registration
            try await database.execute(SQL.upsertDevice, [r.deviceID, item.userID, r.platform, r.fcmToken, r.pushToStartToken, r.timezone, r.locale])
        })
    }

    public func registerDevice(_ registration: DeviceRegistration, userID: String?) async throws {
        let r = registration
        if r.isPushToStartUpdate {
            let updated = try await run {
                try await database.execute(SQL.updatePushToStart, [r.deviceID, r.platform, r.pushToStartToken, userID, r.timezone, r.locale])
            }
            if updated == 0 {
                throw APIError(.deviceNotFound, "no device \(r.deviceID); register it with token (its FCM token) first", field: "deviceId")
            }
        } else {
            try await run { try await devices.submit(r, userID: userID) }
        }
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
                return try Self.ownership(of: deviceID, userID: userID, on: connection, lock: false, unknownDeviceRefused: false)
            }
        }
        if let refusal { throw refusal }
    }

    public func cancelStream(id: String, caller: Caller) async throws -> StreamCommands.CancelReport {
        let rows = try await run { try await database.query(SQL.streamAndCreator, [id, caller.userID]) }
        guard let row = rows.first else { throw APIError(.streamNotFound, "no stream \(id)", field: "id") }
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

    /// Why `userID` may not use the device, or nil when it is theirs.
    private static func ownership(
        of deviceID: String, userID: String, on connection: PostgresConnection, lock: Bool, unknownDeviceRefused: Bool = true
    ) throws -> APIError? {
        let sql = "SELECT user_id, EXISTS (SELECT 1 FROM users WHERE id = $2) AS user_known FROM devices WHERE device_id = $1"
            + (lock ? " FOR SHARE OF devices" : "")
        guard let row = try connection.query(sql, [deviceID, userID]).first else {
            guard unknownDeviceRefused else { return nil }
            return APIError(.deviceNotFound, "no device \(deviceID); register it with POST /notifications/device-token first", field: "deviceId")
        }
        let owner = try row.decode("user_id", as: String?.self)
        if owner == userID { return nil }
        guard try row.decode("user_known", as: Bool.self) else { return unknownUser(userID) }
        return APIError(.forbidden, "device \(deviceID) is not linked to you; register it with your bearer token first")
    }

    static func unknownUser(_ userID: String) -> APIError {
        APIError(.unknownUser, "user \(userID.prefix(64)) is not known here; nothing was linked")
    }

    /// Runs database work, translating what the API answers specially: a lost database (503) and a caller
    /// missing from `users` (403).
    private func run<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as PostgresError {
            if error.isConnectionLoss || error.code == .closed { throw APIError(.unavailable, "PostgreSQL is not reachable") }
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
        /// Idempotent: a repeat with the same values writes nothing. Absent optional values keep the stored
        /// ones; a non-iOS platform drops the push-to-start token.
        static let upsertDevice = """
            INSERT INTO devices AS d (device_id, user_id, platform, fcm_token, push_to_start_token, timezone, locale)
            VALUES ($1, $2, $3, $4, $5, $6, $7)
            """ + deviceConflict

        /// `upsertDevice` for many devices at once (distinct device ids), from parallel arrays.
        static let upsertDevices = """
            INSERT INTO devices AS d (device_id, user_id, platform, fcm_token, push_to_start_token, timezone, locale)
            SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
            """ + deviceConflict

        private static let deviceConflict = """

            ON CONFLICT (device_id) DO UPDATE SET
                user_id = coalesce(EXCLUDED.user_id, d.user_id),
                platform = EXCLUDED.platform,
                fcm_token = EXCLUDED.fcm_token,
                push_to_start_token = CASE WHEN EXCLUDED.platform = 'ios'
                    THEN coalesce(EXCLUDED.push_to_start_token, d.push_to_start_token) END,
                timezone = coalesce(EXCLUDED.timezone, d.timezone),
                locale = coalesce(EXCLUDED.locale, d.locale)
            WHERE (d.user_id, d.platform, d.fcm_token, d.push_to_start_token, d.timezone, d.locale) IS DISTINCT FROM
                  (coalesce(EXCLUDED.user_id, d.user_id), EXCLUDED.platform, EXCLUDED.fcm_token,
                   CASE WHEN EXCLUDED.platform = 'ios' THEN coalesce(EXCLUDED.push_to_start_token, d.push_to_start_token) END,
                   coalesce(EXCLUDED.timezone, d.timezone), coalesce(EXCLUDED.locale, d.locale))
            """

        static let updatePushToStart = """
            UPDATE devices SET platform = $2, push_to_start_token = $3, user_id = coalesce($4::text, user_id),
                timezone = coalesce($5::text, timezone), locale = coalesce($6::text, locale)
            WHERE device_id = $1
            """

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
            SELECT EXISTS (SELECT 1 FROM stream_participants
                           WHERE stream_id = s.id AND user_id = $2 AND role = 'creator') AS is_creator
            FROM streams s WHERE s.id = $1
            """
    }
}
