import BlockingIO

extension PostgresError: TransientError {
    /// Whether the same work may succeed when tried again: the connection was lost or could not be opened, the
    /// transaction lost a serialization race or a deadlock (40001, 40P01), a statement ran into
    /// `statement_timeout` (57014) or `lock_timeout` / `NOWAIT` (55P03). A statement this process cancelled
    /// itself surfaces as `CancellationError`, never as 57014.
    public var isTransient: Bool {
        isConnectionLoss || isSerializationFailure || sqlState == Self.queryCanceled || sqlState == "55P03"
    }
}
