/// What `PostgresListener.nextEvent(timeout:)` reports.
public enum PostgresListenerEvent: Sendable, Equatable {
    case notification(PostgresNotification)
    /// The session was lost and opened again, and every channel is listened to again. Notifications sent
    /// in between are lost: re-read whatever state they would have announced.
    case reconnected
}
