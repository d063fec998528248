import CLibPQ

extension PostgresConnection {
    /// A notification libpq has already read from the socket, if any.
    func nextQueuedNotification() throws -> PostgresNotification? {
        let handle = try openHandle(what: "read notifications")
        guard let raw = PQnotifies(handle) else { return nil }
        defer { PQfreemem(raw) }
        return PostgresNotification(
            channel: String(cString: raw.pointee.relname), payload: String(cString: raw.pointee.extra),
            processID: raw.pointee.be_pid
        )
    }

    /// Waits up to `timeoutMilliseconds` for the server to send something and reads it; throws
    /// `connectionLost` when the session broke meanwhile.
    func awaitInput(timeoutMilliseconds: Int32) throws {
        let what = "wait for notifications"
        let handle = try openHandle(what: what)
        let readable = PostgresSocket.isReadable(PQsocket(handle), timeoutMilliseconds: timeoutMilliseconds)
        guard !readable || PQconsumeInput(handle) != 0, PQstatus(handle) == CONNECTION_OK else {
            throw PostgresError.callFailed(nil, connection: handle, what: what)
        }
    }
}
