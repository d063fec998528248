import BlockingIO

extension RedisError: TransientError {
    /// Whether the same command may succeed when tried again: exactly the failures that break the connection
    /// (I/O, timeout, protocol, closed, connect failure); a server error reply or a bad reply shape would repeat.
    public var isTransient: Bool { breaksConnection }
}
