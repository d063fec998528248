/// What a device registration did, decided atomically with the write (see `DeviceOwnershipQueries`).
public enum DeviceUpsertOutcome: Sendable, Equatable {
    /// Inserted, updated, or already as sent.
    case written
    /// The device is linked to a user and the request carried no bearer token: nothing was written.
    case refused
    /// An authenticated user took over a device linked to someone else: the device is theirs now, and the
    /// previous user's runtime sessions on it (`sessionsEnded`) were removed and handed to the worker for their
    /// end push (see `DeviceOwnershipQueries`).
    case takenOver(previousUser: String, sessionsEnded: Int)
}
