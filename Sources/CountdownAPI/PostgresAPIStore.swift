import CountdownCommands
import CountdownStore
import Postgres

/// The `APIStore` over the contract tables, through the stores of `CountdownStore` (which hold the SQL). Each call is
/// one statement or one short transaction; the schema's triggers turn the rows written here into outbox entries for
/// the workers.
public final class PostgresAPIStore: APIStore {
    public let database: PostgresClient
    private let devices: DeviceUpsertBatcher

    /// - Parameter batchWriters: device registrations are group-committed by up to this many concurrent batches.
    public init(database: PostgresClient, batchWriters: Int = 2) {
        self.database = database
        devices = DeviceUpsertBatcher(maxWriters: batchWriters, write: { unordered in
            let items = unordered.sorted { $0.registration.deviceID < $1.registration.deviceID }  // lock order: device id
            let outcomes = try await database.withConnection { try DeviceOwnershipQueries.write(items, .upsert, on: $0) }
            let byDevice = Dictionary(uniqueKeysWithValues: zip(items.map(\.registration.deviceID), outcomes))
            return unordered.map { byDevice[$0.registration.deviceID].flatMap { $0 } ?? .written }
        })
    }

    public func registerDevice(_ registration: DeviceRegistration, userID: String?) async throws -> DeviceUpsertOutcome {
        let r = registration
        guard r.isPushToStartUpdate else { return try await run { try await devices.submit(r, userID: userID) } }
        let item = DeviceUpsertBatcher.Item(registration: r, userID: userID)
        let outcome = try await run {
            try await database.withConnection { try DeviceOwnershipQueries.write([item], .pushToStartUpdate, on: $0) }.first.flatMap { $0 }
        }
        guard let outcome else {
            throw APIError(.deviceNotFound, "no device \(r.deviceID); register it with token (its FCM token) first", field: "deviceId")
        }
        return outcome
    }

    public func registerSession(_ session: SessionRegistration, userID: String) async throws {
        let s = session
        let registration = try await run {
            try await database.transaction { connection in
                try SessionQueries.register(stream: s.streamID, device: s.deviceID, user: userID, token: s.liveActivityToken,
                                          activity: s.activityID, on: connection)
            }
        }
        switch registration {
        case .registered: return
        case .refused(let refusal): throw Self.error(refusal, deviceID: s.deviceID, userID: userID)
        case .streamMissing: throw APIError(.streamNotFound, "no stream \(s.streamID)", field: "streamId")
        }
    }

    public func removeSession(streamID: String, deviceID: String, activityID: String?, userID: String) async throws {
        let refusal = try await run {
            try await database.transaction {
                try SessionQueries.removeOwn(stream: streamID, device: deviceID, user: userID, activity: activityID, on: $0)
            }
        }
        if let refusal { throw Self.error(refusal, deviceID: deviceID, userID: userID) }
    }

    public func cancelStream(id: String, caller: Caller) async throws -> StreamCommands.CancelReport {
        let rights = try await run { try await database.withConnection { try StreamQueries.cancelRights(id, user: caller.userID, on: $0) } }
        // An admin token whose sub is no user (a deleted or made-up account) cancels nothing.
        guard rights.userKnown else { throw Self.unknownUser(caller.userID) }
        guard rights.streamKnown else { throw APIError(.streamNotFound, "no stream \(id)", field: "id") }
        guard caller.isAdmin || rights.isCreator else {
            throw APIError(.forbidden, "only the stream's creator or an admin may cancel it")
        }
        switch try await run({ try await StreamCommands.cancel(id, database: database) }) {
        case .cancelled(let report): return report
        case .notFound: throw APIError(.streamNotFound, "no stream \(id)", field: "id")
        case .alreadyEnded(let status): throw APIError(.streamAlreadyEnded, "the stream is already \(status.rawValue)")
        }
    }

    public func ping() async throws {
        try await database.withConnection(retryingOnConnectionLoss: true) { try ServerSettingsQueries.ping(on: $0) }
    }

    /// The answer to a refusal. A device linked to someone else and one that does not exist get the same answer
    /// (404), so nobody learns which device ids are in use.
    private static func error(_ refusal: DeviceOwnershipQueries.Refusal, deviceID: String, userID: String) -> APIError {
        switch refusal {
        case .unknownUser: unknownUser(userID)
        case .notYours: APIError(.deviceNotFound, "no device \(deviceID) of yours; register it with POST /notifications/device-token and your "
                                 + "bearer token first", field: "deviceId")
        }
    }

    static func unknownUser(_ userID: String) -> APIError {
        APIError(.unknownUser, "user \(userID.prefix(64)) is not known here; nothing was linked")
    }

    /// Runs database work, translating what the API answers specially (`StoreError`): a lost database or a session
    /// time limit (503) and a caller or stream missing for a foreign key (403, 404).
    func run<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            switch StoreError(classifying: error)?.code {
            case .unreachable?: throw APIError(.unavailable, "PostgreSQL is not reachable")
            case .lockTimeLimit?: throw APIError(.timeout, "the row is busy (locked by another writer); it is safe to repeat")
            case .timeLimit?: throw APIError(.timeout, "the database did not answer in time; it is safe to repeat")
            case .missingUser?: throw APIError(.unknownUser, "the token's user is not known here; nothing was linked")
            case .missingStream?: throw APIError(.streamNotFound, "the stream no longer exists", field: "streamId")
            case .raced?, .rowData?, .refused?, nil: throw error
            }
        }
    }
}
