import BlockingIO
#if canImport(Glibc)
import Glibc
#endif

/// A non-blocking TCP socket to one Redis endpoint: the only owner of its descriptor.
///
/// Every call takes a deadline and waits with `poll`, so the thread that owns the connection never blocks longer than
/// the configured timeouts and a wait for pushed messages can be interrupted.
final class RedisSocket: RedisByteStream {
    enum Received {
        case bytes(Int)
        case timedOut
        case interrupted
    }

    let descriptor: Int32
    /// `host:port`, for error context.
    let endpoint: String

    /// Resolves `host` and connects to the first address that accepts before `deadline`.
    init(host: String, port: Int, deadline: ContinuousClock.Instant) throws {
        endpoint = "\(host):\(port)"
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &list)
        guard resolved == 0, let list else {
            throw RedisError(.connectionFailed, "cannot resolve host: \(String(cString: gai_strerror(resolved)))", context: "connect \(endpoint)")
        }
        defer { freeaddrinfo(list) }
        var lastProblem = "no address"
        var candidate: UnsafeMutablePointer<addrinfo>? = list
        while let address = candidate {
            candidate = address.pointee.ai_next
            let fd = socket(address.pointee.ai_family, address.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), address.pointee.ai_protocol)
            if fd < 0 {
                lastProblem = Self.describe(errno)
                continue
            }
            if let problem = Self.connect(fd, address.pointee, deadline: deadline) {
                Glibc.close(fd)
                lastProblem = problem
                continue
            }
            var on: Int32 = 1
            _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            _ = setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, socklen_t(MemoryLayout<Int32>.size))
            descriptor = fd
            return
        }
        throw RedisError(.connectionFailed, lastProblem, context: "connect \(endpoint)")
    }

    deinit { Glibc.close(descriptor) }

    /// Writes all of `bytes` (never raising SIGPIPE), waiting for buffer space until `deadline`.
    func write(_ bytes: UnsafeRawBufferPointer, deadline: ContinuousClock.Instant) throws {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.send(descriptor, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if written > 0 {
                offset += written
                continue
            }
            let failure = errno
            guard written < 0, failure == EAGAIN || failure == EWOULDBLOCK || failure == EINTR else {
                throw RedisError(.io, Self.describe(failure), context: "write \(endpoint)")
            }
            if case .timedOut = try wait(for: Int16(POLLOUT), deadline: deadline, interrupt: nil) {
                throw RedisError(.timeout, "could not write within the command timeout", context: "write \(endpoint)")
            }
        }
    }

    /// Reads what is available into `buffer`, waiting until `deadline` (or `interrupt`) when nothing is.
    /// Throws `.io` when the server closed the connection.
    func read(into buffer: UnsafeMutableRawBufferPointer, deadline: ContinuousClock.Instant, interrupt: WakePipe?) throws -> Received {
        while true {
            let count = recv(descriptor, buffer.baseAddress, buffer.count, 0)
            if count > 0 { return .bytes(count) }
            if count == 0 { throw RedisError(.io, "server closed the connection", context: "read \(endpoint)") }
            let failure = errno
            guard failure == EAGAIN || failure == EWOULDBLOCK || failure == EINTR else {
                throw RedisError(.io, Self.describe(failure), context: "read \(endpoint)")
            }
            switch try wait(for: Int16(POLLIN), deadline: deadline, interrupt: interrupt) {
            case .timedOut: return .timedOut
            case .interrupted: return .interrupted
            case .bytes: continue
            }
        }
    }

    /// Polls for `events` (and the interrupt pipe) until `deadline`; `.bytes(0)` means ready.
    private func wait(for events: Int16, deadline: ContinuousClock.Instant, interrupt: WakePipe?) throws -> Received {
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            let milliseconds = remaining <= .zero ? 0 : Int32(clamping: remaining.millisecondsRoundedUp)
            var descriptors = [pollfd(fd: descriptor, events: events, revents: 0)]
            if let interrupt { descriptors.append(pollfd(fd: interrupt.readEnd, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&descriptors, nfds_t(descriptors.count), milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                throw RedisError(.io, "poll failed: \(Self.describe(errno))", context: endpoint)
            }
            if descriptors.count > 1, descriptors[1].revents != 0, interrupt?.drain() == true { return .interrupted }
            if descriptors[0].revents != 0 { return .bytes(0) }
            if ready == 0 && milliseconds == 0 { return .timedOut }
        }
    }

    private static func connect(_ fd: Int32, _ address: addrinfo, deadline: ContinuousClock.Instant) -> String? {
        if Glibc.connect(fd, address.ai_addr, address.ai_addrlen) == 0 { return nil }
        guard errno == EINPROGRESS else { return describe(errno) }
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { return "connect timed out" }
            var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&descriptor, 1, Int32(clamping: remaining.millisecondsRoundedUp))
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 { return describe(errno) }
            if ready == 0 { continue }
            var failure: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &length)
            return failure == 0 ? nil : describe(failure)
        }
    }

    static func describe(_ code: Int32) -> String { String(cString: strerror(code)) }
}
