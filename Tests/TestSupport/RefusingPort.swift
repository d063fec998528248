import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP port that refuses every connection until `release()`: bound and never listening, so no other
/// test's server can take it meanwhile (a port picked as "free" and left closed could be given to one). Call
/// `release()` (or `defer` it) after the last connection attempt: that also keeps the port held until then.
public final class RefusingPort: Sendable {
    public let port: Int
    private let fd: Mutex<Int32?>

    public init() {
        while true {
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            precondition(socket >= 0, "socket() failed")
            guard let port = bindLoopback(socket, port: 0) else { preconditionFailure("bind() failed") }
            // Not a port `freeLoopbackPort` gave a server that has not bound it yet.
            guard isFirstHandOut(port) else {
                close(socket)
                continue
            }
            fd = Mutex(socket)
            self.port = port
            return
        }
    }

    /// `127.0.0.1:<port>`.
    public var address: String { "127.0.0.1:\(port)" }

    /// Frees the port (idempotent).
    public func release() {
        if let socket = fd.withLock({ fd -> Int32? in defer { fd = nil }; return fd }) { close(socket) }
    }

    deinit { release() }
}
