import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Holds a loopback port while the server meant for it is down: it listens, so no other test's server can take the
/// port, and closes every connection it accepts at once, so a client sees the server as not there (a closed
/// connection instead of a refused one). A freed port left unheld can be handed to a parallel test's server, and a
/// client then reaches that server instead. Released by `release()` or when it goes away.
public final class ClosingListener: Sendable {
    public let port: Int
    private let fd: Int32
    private let loop = AcceptLoop()

    /// Listens on `127.0.0.1:port`; throws when the port is taken.
    public init(port: Int) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var one: Int32 = 1
        // A server just stopped leaves connections in TIME_WAIT on the port; they must not block the bind.
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard bindLoopback(fd, port: port) != nil, listen(fd, 16) == 0 else {
            let code = POSIXErrorCode(rawValue: errno) ?? .EADDRINUSE
            close(fd)
            throw POSIXError(code)
        }
        self.port = port
        self.fd = fd
        // The thread holds the loop, not the listener, so dropping the listener releases the port.
        Thread.detachNewThread { [loop] in loop.run(fd) }
    }

    deinit { release() }

    /// Stops listening and frees the port (idempotent); returns once the accepting thread has ended.
    public func release() {
        guard !loop.stopped.exchange(true, ordering: .sequentiallyConsistent) else { return }
        shutdown(fd, Int32(SHUT_RDWR))  // wakes the blocked accept
        loop.finished.wait()
        close(fd)
    }

    private final class AcceptLoop: Sendable {
        let stopped = Atomic<Bool>(false)
        let finished = DispatchSemaphore(value: 0)

        func run(_ fd: Int32) {
            defer { finished.signal() }
            while !stopped.load(ordering: .sequentiallyConsistent) {
                let client = accept(fd, nil, nil)
                if client >= 0 {
                    close(client)
                } else if errno != EINTR && errno != ECONNABORTED {
                    return
                }
            }
        }
    }
}
