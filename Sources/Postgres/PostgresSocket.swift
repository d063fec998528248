#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Waiting on a connection's socket.
enum PostgresSocket {
    /// Whether `socket` has input (or a hang-up) within `timeoutMilliseconds`; retries on EINTR.
    static func isReadable(_ socket: Int32, timeoutMilliseconds: Int32) -> Bool {
        guard socket >= 0 else { return true }  // no socket: let libpq report the broken connection
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        while true {
            let ready = poll(&descriptor, 1, timeoutMilliseconds)
            if ready < 0 && errno == EINTR { continue }
            return ready != 0
        }
    }
}
