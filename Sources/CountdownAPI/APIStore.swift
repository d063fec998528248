import CountdownCommands

/// What the API needs from PostgreSQL. Domain outcomes are thrown as `APIError` (unknown user, device or stream,
/// not the owner, already ended); a lost database as `.unavailable`. `PostgresAPIStore` is the real one.
public protocol APIStore: Sendable {
    /// Upserts the device (idempotent). With a user the device is linked to it; without one the link is kept.
    /// A push-to-start-only registration updates an existing device and throws `.deviceNotFound` otherwise.
    func registerDevice(_ registration: DeviceRegistration, userID: String?) async throws

    /// Upserts the runtime session of the user's device.
    /// Throws `.streamNotFound`, `.deviceNotFound`, `.forbidden` (not the device's owner).
    func registerSession(_ session: SessionRegistration, userID: String) async throws

    /// Deletes the runtime session, if any. Throws `.forbidden` when the device belongs to someone else.
    func removeSession(streamID: String, deviceID: String, userID: String) async throws

    /// Cancels the stream when the caller is its creator or an admin.
    /// Throws `.streamNotFound`, `.forbidden`, `.streamAlreadyEnded`.
    func cancelStream(id: String, caller: Caller) async throws -> StreamCommands.CancelReport

    /// Succeeds when PostgreSQL answers.
    func ping() async throws
}
