import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A loopback port for a server that is not there yet: it listens on a port the kernel picked (so nobody else can
/// have it, now or later) and closes every connection it accepts at once, so a client sees the server as not there
/// (a closed connection instead of a refused one). Once the server is up on a port of its own, `forward(to:)` makes
/// it relay every later connection to that server. (A port freed and bound again by the server would leave a moment
/// in which anything else on the machine could take it.) Released by `release()` or when it goes away.
public final class ClosingListener: Sendable {
    public let port: Int
    private let fd: Int32
    private let loop = AcceptLoop()

    /// Listens on a free `127.0.0.1` port.
    public init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        guard let port = bindLoopback(fd, port: 0), listen(fd, 16) == 0 else {
            let code = POSIXErrorCode(rawValue: errno) ?? .EADDRINUSE
            close(fd)
            throw POSIXError(code)
        }
        _ = isFirstHandOut(port)
        self.port = port
        self.fd = fd
        // The thread holds the loop, not the listener, so dropping the listener releases the port.
        Thread.detachNewThread { [loop] in loop.run(fd) }
    }

    deinit { release() }

    /// From now on, connections are relayed to the server on the loopback `port` (each in both directions until
    /// either side closes).
    public func forward(to port: Int) {
        loop.target.store(port, ordering: .sequentiallyConsistent)
    }

    /// Stops listening, ends the relayed connections and frees the port (idempotent); returns once the accepting
    /// thread has ended.
    public func release() {
        guard !loop.stopped.exchange(true, ordering: .sequentiallyConsistent) else { return }
        shutdown(fd, Int32(SHUT_RDWR))  // wakes the blocked accept
        loop.finished.wait()
        close(fd)
        loop.endRelays()
    }

    private final class AcceptLoop: Sendable {
        let stopped = Atomic<Bool>(false)
        let target = Atomic<Int>(0)
        let finished = DispatchSemaphore(value: 0)
        /// The sockets of the relayed connections still open (shut down by `endRelays`).
        private let relayed = Mutex<Set<Int32>>([])

        func run(_ fd: Int32) {
            defer { finished.signal() }
            while !stopped.load(ordering: .sequentiallyConsistent) {
                let client = accept(fd, nil, nil)
                if client >= 0 {
                    _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                    relay(client)
                } else if errno != EINTR && errno != ECONNABORTED {
                    return
                }
            }
        }

        /// Relays `client` to the target server, or closes it when there is none (or it cannot be reached).
        private func relay(_ client: Int32) {
            let port = target.load(ordering: .sequentiallyConsistent)
            let upstream = port > 0 ? connectLoopback(port) : nil
            guard let upstream else {
                close(client)
                return
            }
            relayed.withLock { $0.formUnion([client, upstream]) }
            let ended = Directions()
            for (from, to) in [(client, upstream), (upstream, client)] {
                Thread.detachNewThread { [self] in
                    copy(from: from, to: to)
                    shutdown(to, Int32(SHUT_WR))
                    // The second direction to end closes both sockets.
                    if ended.count.add(1, ordering: .sequentiallyConsistent).newValue == 2 {
                        relayed.withLock { $0.subtract([client, upstream]) }
                        close(client)
                        close(upstream)
                    }
                }
            }
        }

        private func copy(from: Int32, to: Int32) {
            var buffer = [UInt8](repeating: 0, count: 16_384)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(from, $0.baseAddress, $0.count, 0) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return }
                var sent = 0
                while sent < count {
                    let written = buffer.withUnsafeBytes { send(to, $0.baseAddress! + sent, count - sent, Int32(MSG_NOSIGNAL)) }
                    if written < 0 && errno == EINTR { continue }
                    guard written > 0 else { return }
                    sent += written
                }
            }
        }

        /// How many directions of a relayed connection have ended.
        private final class Directions: Sendable {
            let count = Atomic<Int>(0)
        }

        func endRelays() {
            relayed.withLock { fds in fds.forEach { shutdown($0, Int32(SHUT_RDWR)) } }
        }
    }
}

/// A TCP connection to `127.0.0.1:port` (close-on-exec), or nil when refused.
private func connectLoopback(_ port: Int) -> Int32? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return nil }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
    guard connected else {
        close(fd)
        return nil
    }
    return fd
}
