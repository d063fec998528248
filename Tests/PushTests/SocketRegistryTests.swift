import Glibc
@testable import HTTPClient
import Testing
import TestSupport

/// The engine parks idle connection sockets in its epoll set; what makes that safe is that every socket it parks
/// is closed through the registry, which takes it out of the set first.
@Suite struct SocketRegistryTests {
    /// A listening loopback socket opened through `registry`, and its port.
    static func listeningSocket(_ registry: SocketRegistry) throws -> (fd: Int32, port: Int) {
        let fd = registry.open(family: AF_INET, type: Int32(SOCK_STREAM.rawValue), protocol: 0)
        try #require(fd >= 0)
        let port = try #require(bindLoopback(fd, port: 0))
        try #require(listen(fd, 4) == 0)
        return (fd, port)
    }

    @Test func socketsOpenedHereAreOwnedCloseOnExecAndLeaveTheSetWhenClosed() throws {
        let poller = try EventPoller()
        let registry = SocketRegistry(poller: poller)
        let first = registry.open(family: AF_INET, type: Int32(SOCK_STREAM.rawValue), protocol: 0)
        try #require(first >= 0)
        #expect(registry.owns(first))
        #expect(fcntl(first, F_GETFD) & FD_CLOEXEC != 0)
        try poller.watch(first, read: true, write: false, sameSocket: true)
        poller.park(first)
        #expect(poller.holds(first))
        #expect(registry.close(first) == 0)
        #expect(!registry.owns(first))
        #expect(!poller.holds(first))
    }

    @Test func aParkedSocketsNumberReusedByANewSocketIsWatchedForReal() throws {
        let poller = try EventPoller()
        let registry = SocketRegistry(poller: poller)
        let old = registry.open(family: AF_INET, type: Int32(SOCK_STREAM.rawValue), protocol: 0)
        try poller.watch(old, read: true, write: false, sameSocket: true)
        poller.park(old)
        _ = registry.close(old)
        // Usually the same number again; watched for the same events, it must reach the kernel's set all the same.
        let (listener, port) = try Self.listeningSocket(registry)
        defer { _ = registry.close(listener) }
        try poller.watch(listener, read: true, write: false, sameSocket: true)
        let client = try RawSocket(port: port)
        defer { client.close() }
        var ready: [Int32] = []
        poller.wait(timeoutMilliseconds: 2000) { ready.append($0.fd) }
        #expect(ready == [listener])
    }

    @Test func onlyASocketWatchedForReadingAloneIsParked() throws {
        let poller = try EventPoller()
        let registry = SocketRegistry(poller: poller)
        let fd = registry.open(family: AF_INET, type: Int32(SOCK_STREAM.rawValue), protocol: 0)
        defer { _ = registry.close(fd) }
        try poller.watch(fd, read: true, write: true, sameSocket: true)
        poller.park(fd)
        #expect(!poller.holds(fd))
    }
}
