import Synchronization

/// A shareable box around a `Mutex`, for state that several tasks or threads update.
public final class Locked<Value>: Sendable {
    private let mutex: Mutex<Value>

    public init(_ value: sending Value) { mutex = Mutex(value) }

    /// Runs `body` with exclusive access to the value.
    public func withLock<T>(_ body: (inout sending Value) throws -> sending T) rethrows -> sending T {
        try mutex.withLock(body)
    }
}

extension Locked where Value: Sendable {
    /// A copy of the current value.
    public var value: Value { mutex.withLock { $0 } }
}
