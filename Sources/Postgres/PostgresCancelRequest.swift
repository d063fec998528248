import CLibPQ

/// The only owner of one `PGcancel*` (`PQgetCancel`; `deinit` calls `PQfreeCancel`): what it takes to ask the
/// server to cancel the statement a session is running, from any thread (`PQcancel` is thread-safe and does not
/// touch the session's `PGconn`).
final class PostgresCancelRequest: @unchecked Sendable {
    private let raw: OpaquePointer

    /// `nil` when the connection is not open.
    init?(connection handle: OpaquePointer) {
        guard let raw = PQgetCancel(handle) else { return nil }
        self.raw = raw
    }

    deinit { PQfreeCancel(raw) }

    /// Asks the server to cancel the statement in flight; blocks while it connects to the server. Returns libpq's
    /// message when the request could not be sent (the statement then simply runs to its end).
    @discardableResult
    func send() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard PQcancel(raw, &buffer, Int32(buffer.count)) == 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
