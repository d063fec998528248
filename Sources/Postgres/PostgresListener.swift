import BlockingIO
import Foundation

/// A dedicated session, on its own thread, that `LISTEN`s to channels and hands out notifications.
///
/// When the session breaks (server restart, network), the next `nextEvent` reconnects, listens to every
/// channel again and reports `.reconnected`, because notifications sent meanwhile are lost. Calls run one at
/// a time on the listener's thread: `listen` waits for a pending `nextEvent` to return.
public final class PostgresListener: Sendable {
    public let configuration: PostgresConfiguration
    private let connection: ConnectionThread<PostgresConnection>
    private let state: State

    /// Touched only on the connection's thread.
    private final class State: @unchecked Sendable {
        var channels: [String] = []
        var reconnected = false
        var closed = false
    }

    /// Longest pause between reconnection attempts while the server is unreachable.
    private static let reconnectPause: Duration = .milliseconds(200)

    /// Connects lazily, on the first `listen` or `nextEvent`.
    public init(configuration: PostgresConfiguration) {
        let state = State()
        self.configuration = configuration
        self.state = state
        connection = ConnectionThread(name: "postgres-listener", open: {
            let connection = try PostgresConnection(configuration: configuration)
            for channel in state.channels {
                try connection.execute("LISTEN \(try connection.quoteIdentifier(channel))")
            }
            return connection
        }, isUsable: \.isHealthy)
    }

    deinit { connection.close() }

    /// Starts listening to `channel` (any name of 1 to 63 bytes; it is quoted as an identifier).
    public func listen(_ channel: String) async throws {
        try Self.validate(channel)
        let state = self.state
        try await connection.run { slot in
            try Self.retryingOnceOnConnectionLoss(slot) {
                let connection = try Self.connected(slot, state)
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
        let state = self.state
        return try await connection.run { slot in
            let clock = ContinuousClock()
            let deadline = clock.now.advanced(by: timeout)
            while true {
                do {
                    let connection = try Self.connected(slot, state)
                    if state.reconnected {
                        state.reconnected = false
                        return .reconnected
                    }
                    if let notification = try connection.nextQueuedNotification() { return .notification(notification) }
                    let remaining = clock.now.duration(to: deadline)
                    if remaining <= .zero { return nil }
                    try connection.awaitInput(timeoutMilliseconds: Int32(clamping: max(remaining.millisecondsRoundedUp, 0)))
                } catch let error as PostgresError where error.isConnectionLoss {
                    slot.connection = nil
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
        _ = try? await connection.run { slot in
            state.closed = true
            slot.connection = nil
        }
        connection.close()
    }

    /// The listening connection; opening one in place of a broken one is reported as `.reconnected`.
    private static func connected(_ slot: ConnectionThread<PostgresConnection>, _ state: State) throws -> PostgresConnection {
        if state.closed {
            throw PostgresError(code: .closed, what: "listen for notifications", message: "the listener has been closed")
        }
        let (connection, fresh) = try slot.connected()
        if fresh && slot.generation > 1 { state.reconnected = true }
        return connection
    }

    private static func retryingOnceOnConnectionLoss(_ slot: ConnectionThread<PostgresConnection>, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as PostgresError where error.isConnectionLoss && slot.connection != nil {
            slot.connection = nil
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
