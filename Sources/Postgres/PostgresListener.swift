import BlockingIO
import Foundation

/// A dedicated session, on its own thread, that `LISTEN`s to channels and hands out notifications.
///
/// When the session breaks (server restart, network), the next `nextEvent` reconnects, listens to every
/// channel again and reports `.reconnected`, because notifications sent meanwhile are lost. Calls run one at
/// a time on the listener's thread: `listen` waits for a pending `nextEvent` to return.
public final class PostgresListener: Sendable {
    public let configuration: PostgresConfiguration
    private let thread: SerialThread
    private let state = State()

    /// Touched only on `thread`.
    private final class State: @unchecked Sendable {
        var connection: PostgresConnection?
        var channels: [String] = []
        var hasConnected = false
        var reconnected = false
        var closed = false
    }

    /// Longest pause between reconnection attempts while the server is unreachable.
    private static let reconnectPause: Duration = .milliseconds(200)

    /// Connects lazily, on the first `listen` or `nextEvent`.
    public init(configuration: PostgresConfiguration) {
        self.configuration = configuration
        thread = SerialThread(name: "postgres-listener")
    }

    deinit {
        let state = self.state
        thread.submit {
            state.closed = true
            state.connection = nil
        }
        thread.stop()
    }

    /// Starts listening to `channel` (any name of 1 to 63 bytes; it is quoted as an identifier).
    public func listen(_ channel: String) async throws {
        try Self.validate(channel)
        let (state, configuration) = (self.state, self.configuration)
        try await thread.run {
            try Self.retryingOnceOnConnectionLoss(state) {
                let connection = try Self.connected(state, configuration)
                guard !state.channels.contains(channel) else { return }
                try connection.execute("LISTEN \(try connection.quoteIdentifier(channel))")
                state.channels.append(channel)
            }
        }
    }

    /// The next notification or `.reconnected`, or nil when nothing arrives within `timeout`.
    ///
    /// While the server is unreachable it keeps trying to reconnect until `timeout`, then throws the last
    /// connection error; calling again resumes trying.
    public func nextEvent(timeout: Duration) async throws -> PostgresListenerEvent? {
        let (state, configuration) = (self.state, self.configuration)
        return try await thread.run {
            let clock = ContinuousClock()
            let deadline = clock.now.advanced(by: timeout)
            while true {
                do {
                    let connection = try Self.connected(state, configuration)
                    if state.reconnected {
                        state.reconnected = false
                        return .reconnected
                    }
                    if let notification = try connection.nextQueuedNotification() { return .notification(notification) }
                    let remaining = clock.now.duration(to: deadline)
                    if remaining <= .zero { return nil }
                    try connection.awaitInput(timeoutMilliseconds: Int32(clamping: max(remaining.millisecondsRoundedUp, 0)))
                } catch let error as PostgresError where error.isConnectionLoss {
                    state.connection = nil
                    let remaining = clock.now.duration(to: deadline)
                    if remaining <= .zero { throw error }
                    Thread.sleep(forTimeInterval: min(remaining, Self.reconnectPause).timeInterval)
                }
            }
        }
    }

    /// Ends the session and the thread; later calls fail with `closed`.
    public func close() async {
        let state = self.state
        _ = try? await thread.run {
            state.closed = true
            state.connection = nil
        }
        thread.stop()
    }

    private static func connected(_ state: State, _ configuration: PostgresConfiguration) throws -> PostgresConnection {
        if state.closed {
            throw PostgresError(code: .closed, what: "listen for notifications", message: "the listener has been closed")
        }
        if let connection = state.connection, connection.isHealthy { return connection }
        state.connection = nil
        let connection = try PostgresConnection(configuration: configuration)
        for channel in state.channels {
            try connection.execute("LISTEN \(try connection.quoteIdentifier(channel))")
        }
        state.connection = connection
        if state.hasConnected { state.reconnected = true }
        state.hasConnected = true
        return connection
    }

    private static func retryingOnceOnConnectionLoss(_ state: State, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as PostgresError where error.isConnectionLoss && state.connection != nil {
            state.connection = nil
            try body()
        }
    }

    private static func validate(_ channel: String) throws {
        let length = channel.utf8.count
        guard length > 0, length <= 63, !channel.utf8.contains(0) else {
            throw PostgresError(
                code: .invalidParameter, what: "listen for notifications",
                message: "a channel name must be 1 to 63 bytes without NUL characters (got \(length) bytes)"
            )
        }
    }
}
