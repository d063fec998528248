import Foundation
@testable import HTTPServer
import Synchronization
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The watchdog on a clock the test moves: which connections it closes when, independent of how fast this machine is.
@Suite struct RequestDeadlineWatchdogTests {
    /// A continuous clock that moves only when the test sets how far it is past its start.
    final class MovedClock: Sendable {
        let start = ContinuousClock.now
        private let elapsed = Mutex(Duration.zero)

        func set(_ duration: Duration) { elapsed.withLock { $0 = duration } }
        var now: @Sendable () -> ContinuousClock.Instant { { self.start + self.elapsed.withLock { $0 } } }
    }

    /// A connected socket pair: the watchdog gets `watched`, the test looks at `peer` to see it shut down.
    struct SocketPair {
        let watched: Int32
        let peer: Int32

        init() throws {
            var fds: [Int32] = [0, 0]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { throw POSIXError(.EMFILE) }
            (watched, peer) = (fds[0], fds[1])
            _ = fcntl(peer, F_SETFL, fcntl(peer, F_GETFL) | O_NONBLOCK)
        }

        /// Whether the watched end was shut down (the peer reads end of file).
        var shutDown: Bool {
            var byte: UInt8 = 0
            return recv(peer, &byte, 1, 0) == 0
        }

        func close() {
            Glibc.close(watched)
            Glibc.close(peer)
        }
    }

    /// A watchdog (deadline 1.5 s) on a moved clock, and two connections of its own (`first` and `second`).
    final class Subject {
        let clock = MovedClock()
        let watchdog: RequestDeadlineWatchdog
        let sockets: (first: SocketPair, second: SocketPair)
        let first = OpaquePointer(bitPattern: 1)!
        let second = OpaquePointer(bitPattern: 2)!

        init() throws {
            watchdog = RequestDeadlineWatchdog(deadline: .milliseconds(1500), now: clock.now)
            sockets = (try SocketPair(), try SocketPair())
        }

        deinit {
            watchdog.stop()
            sockets.first.close()
            sockets.second.close()
        }
    }

    @Test func theNextRequestOnAKeptAliveConnectionGetsAFreshDeadline() async throws {
        let subject = try Subject()
        let (watchdog, keptAlive, idle) = (subject.watchdog, subject.sockets.first, subject.sockets.second)
        watchdog.connectionStarted(subject.first, fd: keptAlive.watched)
        watchdog.connectionStarted(subject.second, fd: idle.watched)

        // An answer at 1 s: the kept-alive connection's next request has until 2.5 s.
        subject.clock.set(.seconds(1))
        watchdog.requestReceived(subject.first)
        watchdog.requestCompleted(subject.first)
        // At 2 s the connection that never sent a request is past its deadline: once it is closed, the watchdog has
        // looked at 2 s, and the kept-alive one, 2 s old, is still open.
        subject.clock.set(.seconds(2))
        try await waitUntil("the idle connection closed at its deadline") { idle.shutDown }
        #expect(watchdog.closed == 1)
        #expect(!keptAlive.shutDown, "1 s after its answer, a kept-alive connection is within its fresh deadline")

        subject.clock.set(.milliseconds(2600))
        try await waitUntil("the kept-alive connection closed 1.5 s after its answer") { keptAlive.shutDown }
        #expect(watchdog.closed == 2)
    }

    @Test func aRequestBeingAnsweredIsNeverClosed() async throws {
        let subject = try Subject()
        let (watchdog, answering, idle) = (subject.watchdog, subject.sockets.first, subject.sockets.second)
        watchdog.connectionStarted(subject.first, fd: answering.watched)
        watchdog.requestReceived(subject.first)
        subject.clock.set(.seconds(1))
        watchdog.connectionStarted(subject.second, fd: idle.watched)
        subject.clock.set(.seconds(3))
        try await waitUntil("the idle connection closed at its deadline") { idle.shutDown }
        #expect(!answering.shutDown, "a complete request's answer takes as long as it takes")
        #expect(watchdog.closed == 1)
    }
}
