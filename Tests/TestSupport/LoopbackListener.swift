import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP socket bound to a free loopback port and listening, for a child server to take over (`--listen-fd`): the
/// port is known before the child starts and nobody else can take it in between. Closed (in this process) on deinit.
public final class LoopbackListener: @unchecked Sendable {
    public let descriptor: Int32
    public let port: Int

    public init() throws {
        var fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw FakeStartFailed(output: "socket(): \(String(cString: strerror(errno)))") }
        if fd == 3 {
            // A spawn maps the socket to the child's descriptor 3 with dup2, which keeps close-on-exec on 3 → 3.
            let moved = fcntl(fd, F_DUPFD_CLOEXEC, 4)
            close(fd)
            fd = moved
        }
        guard fd >= 0, let port = bindLoopback(fd, port: 0), listen(fd, 1024) == 0 else {
            let reason = String(cString: strerror(errno))
            if fd >= 0 { close(fd) }
            throw FakeStartFailed(output: "binding a loopback listener: \(reason)")
        }
        _ = isFirstHandOut(port)
        descriptor = fd
        self.port = port
    }

    deinit { close(descriptor) }
}
