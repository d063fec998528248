import CountdownCommands
import CountdownStore

/// What the API needs from PostgreSQL. Domain outcomes are thrown as `APIError` (unknown user, device or stream,
/// not the owner, already ended); a lost database as `.unavailable`. `PostgresAPIStore` is the real one.
public protocol APIStore: Sendable {
    /// Upserts the device (idempotent). With a user the device is linked to it (taking it over from another
    /// user: what the request did not send is cleared, and that user's sessions on it are ended); without one, only a device with no user is written (`.refused`
    /// otherwise, nothing written). A push-to-start-only registration updates an existing device and throws
    /// `.deviceNotFound` otherwise.
    func registerDevice(_ registration: DeviceRegistration, userID: String?) async throws -> DeviceUpsertOutcome

    /// Upserts the runtime session of the user's device.
    /// Throws `.streamNotFound`, `.deviceNotFound` (no such device, or not the caller's: the two are answered
    /// alike), `.unknownUser`.
    func registerSession(_ session: SessionRegistration, userID: String) async throws

    /// Deletes the runtime sessions, if any, of the caller's device for the stream: with `activityID`, that
    /// activity's only. Throws `.deviceNotFound` when the device is not the caller's or does not exist (alike),
    /// `.unknownUser`.
    func removeSession(streamID: String, deviceID: String, activityID: String?, userID: String) async throws

    /// Cancels the stream when the caller is its creator or an admin (a user in `users` either way).
    /// Throws `.unknownUser`, `.streamNotFound`, `.forbidden`, `.streamAlreadyEnded`.
    func cancelStream(id: String, caller: Caller) async throws -> StreamCommands.CancelReport

    /// Records the iOS version the device's app reported (`osVersion`).
    func recordOSVersion(deviceID: String, version: String, major: Int) async throws

    /// The stream's broadcast channel id (SPEC 12.5), nil when it has none. Throws `.streamNotFound`.
    func liveActivityChannel(streamID: String) async throws -> String?

    /// Succeeds when PostgreSQL answers.
    func ping() async throws
}
