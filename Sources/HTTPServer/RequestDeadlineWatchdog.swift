import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Closes connections that take longer than the deadline to deliver a complete request (headers and body).
///
/// libmicrohttpd's connection timeout counts idle time only, so a client sending a byte every few seconds
/// would keep its connection forever. The clock of a connection starts when it is accepted and again after
/// each answer (keep-alive); it stops while a complete request is being answered. A connection past its
/// deadline has its socket shut down (`shutdown`, not `close`: the daemon still owns the descriptor and
/// closes it when it notices), so the daemon drops it on its next look. Checked by one thread, every 100 ms.
final class RequestDeadlineWatchdog: @unchecked Sendable {
    private struct Tracked {
        let fd: Int32
        var since: ContinuousClock.Instant
        var receiving = true
    }

    let deadline: Duration
    private let exceeded: (@Sendable () -> Void)?
    private let now: @Sendable () -> ContinuousClock.Instant
    private let condition = NSCondition()
    private var tracked: [OpaquePointer: Tracked] = [:]  // guarded by condition
    private var stopped = false
    private var closedCount = 0

    /// - Parameter now: the clock deadlines are measured on (tests move one by hand).
    init(deadline: Duration, exceeded: (@Sendable () -> Void)? = nil, now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.deadline = deadline
        self.exceeded = exceeded
        self.now = now
        let thread = Thread { [self] in run() }
        thread.name = "http-request-deadline"
        thread.start()
    }

    /// Connections closed because their request was not complete in time.
    var closed: Int {
        condition.lock()
        defer { condition.unlock() }
        return closedCount
    }

    func connectionStarted(_ connection: OpaquePointer, fd: Int32) {
        let since = now()
        update { $0[connection] = Tracked(fd: fd, since: since) }
    }

    /// The request is complete: its answer is the handler's business now.
    func requestReceived(_ connection: OpaquePointer) {
        update { $0[connection]?.receiving = false }
    }

    /// An answer went out: the next request on the connection gets a fresh deadline.
    func requestCompleted(_ connection: OpaquePointer) {
        let since = now()
        update { tracked in
            tracked[connection]?.since = since
            tracked[connection]?.receiving = true
        }
    }

    func connectionClosed(_ connection: OpaquePointer) {
        update { $0[connection] = nil }
    }

    func stop() {
        update { _ in stopped = true }
        condition.broadcast()
    }

    private func update(_ body: (inout [OpaquePointer: Tracked]) -> Void) {
        condition.lock()
        body(&tracked)
        condition.unlock()
    }

    private func run() {
        condition.lock()
        while !stopped {
            _ = condition.wait(until: Date().addingTimeInterval(0.1))
            let instant = now()
            var closedNow = 0
            for (connection, entry) in tracked where entry.receiving && entry.since.duration(to: instant) > deadline {
                // Under the lock: a connection is removed (before the daemon closes its descriptor) only under it.
                shutdown(entry.fd, Int32(SHUT_RDWR))
                tracked[connection]?.receiving = false
                closedNow += 1
            }
            closedCount += closedNow
            if closedNow > 0, let exceeded {
                condition.unlock()
                for _ in 0..<closedNow { exceeded() }
                condition.lock()
            }
        }
        condition.unlock()
    }
}
