/// One connection on a thread of its own (its blocking calls stay off the cooperative pool): opened by the first work
/// that needs it, opened again in place of one that broke, dropped by `close()`. Work runs on the thread with `run`;
/// `connection`, `generation` and `connected()` belong to that work alone.
public final class ConnectionThread<Connection>: @unchecked Sendable {
    /// The connection held; set it to nil to drop one that broke.
    public var connection: Connection?
    /// Counts the connections opened, so work can tell its own connection from a replacement.
    public private(set) var generation = 0
    private let thread: SerialThread
    private let open: @Sendable () throws -> Connection
    private let isUsable: @Sendable (Connection) -> Bool

    /// Starts the thread named `name`. `open` makes a ready connection (on the thread); `isUsable` says whether the
    /// connection held may serve more work.
    public init(name: String, open: @escaping @Sendable () throws -> Connection,
                isUsable: @escaping @Sendable (Connection) -> Bool) {
        thread = SerialThread(name: name)
        self.open = open
        self.isUsable = isUsable
    }

    /// Runs `body` on the thread, after the work queued before it, and returns its result to the awaiting task.
    public func run<T: Sendable>(_ body: @escaping @Sendable (ConnectionThread) throws -> T) async throws -> T {
        try await thread.run { [self] in try body(self) }
    }

    /// The connection held, or a new one in place of a missing or broken one; `fresh` when just opened.
    public func connected() throws -> (connection: Connection, fresh: Bool) {
        if let connection, isUsable(connection) { return (connection, false) }
        connection = nil
        let opened = try open()
        connection = opened
        generation += 1
        return (opened, true)
    }

    /// Drops the connection once the work queued before has run, then ends the thread (work submitted afterwards runs
    /// on a throwaway thread).
    public func close() {
        thread.submit { [self] in connection = nil }
        thread.stop()
    }
}
