/// An error that can say whether the work that raised it may succeed if simply tried again later (a dropped
/// connection, a lost serialization race, a timeout), as opposed to failing the same way every time.
public protocol TransientError: Error {
    /// Whether retrying the same work later may succeed.
    var isTransient: Bool { get }
}

/// Whether `error` is a `TransientError` that says it is transient; any other error is not.
public func isTransient(_ error: any Error) -> Bool {
    (error as? any TransientError)?.isTransient ?? false
}
