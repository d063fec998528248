import BlockingIO
import CCurl
import Glibc

/// Owner of one epoll instance and the eventfd that wakes it; `deinit` closes both.
///
/// The transfer engine registers the sockets libcurl asks it to watch, so a wake-up costs only the sockets that
/// are ready: `poll` over every open connection (what `curl_multi_poll` does) cost a quarter of a push's CPU with
/// a few hundred HTTP/1.1 connections.
final class EventPoller {
    /// A ready descriptor and what it is ready for.
    struct Ready {
        var fd: Int32
        var readable: Bool
        var writable: Bool
        var failed: Bool
    }

    private let epoll: Int32
    private let wakeFD: Int32
    /// Ready descriptors taken per wait (the shim's limit too).
    private var fds = [Int32](repeating: -1, count: 128)
    private var events = [UInt32](repeating: 0, count: 128)
    /// The descriptors in the set (besides the wake-up's), with the events each is registered for.
    private var registered: [Int32: UInt32] = [:]
    /// Registered descriptors nobody waits on now: idle connections kept in the set between transfers.
    private var parked = Set<Int32>()

    init() throws {
        let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { throw Self.error("epoll_create1") }
        let wakeFD = countdown_eventfd()
        guard wakeFD >= 0 else {
            let failure = Self.error("eventfd")
            close(epoll)
            throw failure
        }
        // Before the properties are set: a failed init after that would also run `deinit` and close them twice.
        guard countdown_epoll_ctl(epoll, EPOLL_CTL_ADD, wakeFD, EPOLLIN.rawValue) == 0 else {
            let failure = Self.error("epoll_ctl(eventfd)")
            close(wakeFD)
            close(epoll)
            throw failure
        }
        self.epoll = epoll
        self.wakeFD = wakeFD
    }

    deinit {
        close(wakeFD)
        close(epoll)
    }

    /// Watches `fd` for reading and/or writing (level-triggered), replacing what it was watched for before: one
    /// `epoll_ctl`, an add or a modification as the set holds the descriptor or not. `sameSocket`: the caller knows
    /// `fd` is the socket it registered before (it sees every close), so an unchanged interest needs no call.
    func watch(_ fd: Int32, read: Bool, write: Bool, sameSocket: Bool = false) throws {
        let mask = (read ? EPOLLIN.rawValue : 0) | (write ? EPOLLOUT.rawValue : 0)
        parked.remove(fd)
        let current = registered[fd]
        if sameSocket, current == mask { return }
        // What the set holds is known, so the right call comes first; the other is the fallback for a descriptor
        // closed and reused without `forget` (the kernel drops a closed one from the set). Never skipped for
        // another descriptor, even for an unchanged interest (which libcurl does not ask for twice): it may be a
        // new socket.
        let (first, second) = current != nil ? (EPOLL_CTL_MOD, EPOLL_CTL_ADD) : (EPOLL_CTL_ADD, EPOLL_CTL_MOD)
        if countdown_epoll_ctl(epoll, first, fd, mask) != 0 {
            guard errno == (first == EPOLL_CTL_ADD ? EEXIST : ENOENT), countdown_epoll_ctl(epoll, second, fd, mask) == 0 else {
                registered[fd] = nil
                throw Self.error("epoll_ctl(\(fd))")
            }
        }
        registered[fd] = mask
    }

    /// Stops watching `fd`; a descriptor already closed (and so already gone from the set) is not an error.
    func forget(_ fd: Int32) {
        parked.remove(fd)
        registered[fd] = nil
        _ = countdown_epoll_ctl(epoll, EPOLL_CTL_DEL, fd, 0)
    }

    /// Whether `fd` is in the set as far as the poller knows (watched or parked).
    func holds(_ fd: Int32) -> Bool { registered[fd] != nil }

    /// Nobody waits on `fd` for now, but it stays open: it stays in the set, without a call, if it was watched for
    /// reading only (an idle connection's socket reports only its peer closing it or a stray byte, and is taken
    /// out then); anything else is forgotten. The caller must `forget` it before it is closed.
    func park(_ fd: Int32) {
        guard registered[fd] == EPOLLIN.rawValue else { return forget(fd) }
        parked.insert(fd)
    }

    /// Makes a `wait` in progress, or the next one, return at once. Safe from any thread.
    func wake() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(wakeFD, $0.baseAddress, $0.count) }
    }

    /// Sleeps up to `duration` (rounded up to whole milliseconds), or until `wake()` is called (the wake-up stays
    /// pending for the next `wait`). Ready sockets do not end it.
    func pause(upTo duration: Duration) {
        guard duration > .zero else { return }
        let milliseconds = min(Int64(Int32.max), duration.millisecondsRoundedUp)
        var descriptor = pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, Int32(milliseconds))
    }

    /// The most ready descriptors one `wait` returns.
    var capacity: Int { fds.count }

    /// Waits up to `timeoutMilliseconds` (-1: no limit), or until `wake()`, and calls `body` for each ready socket.
    /// Returns how many descriptors were ready (the wake-up's included).
    @discardableResult
    func wait(timeoutMilliseconds: Int32, _ body: (Ready) -> Void) -> Int {
        let count = fds.withUnsafeMutableBufferPointer { fds in
            events.withUnsafeMutableBufferPointer { events in
                countdown_epoll_wait(epoll, fds.baseAddress, events.baseAddress, Int32(fds.count), timeoutMilliseconds)
            }
        }
        for index in 0..<max(0, Int(count)) {
            let fd = fds[index]
            let mask = events[index]
            if fd == wakeFD {
                var value: UInt64 = 0
                _ = withUnsafeMutableBytes(of: &value) { read(wakeFD, $0.baseAddress, $0.count) }
                continue
            }
            if parked.contains(fd) {
                // An idle connection became readable (closed by its peer): level-triggered, so it would be
                // reported again at every wait. libcurl finds it dead when it next looks at it.
                forget(fd)
                continue
            }
            body(Ready(fd: fd, readable: mask & EPOLLIN.rawValue != 0, writable: mask & EPOLLOUT.rawValue != 0,
                       failed: mask & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0))
        }
        return max(0, Int(count))
    }

    private static func error(_ what: String) -> HTTPClientError {
        HTTPClientError(.other, "\(what): \(String(cString: strerror(errno)))")
    }
}
