import CHiredis
#if canImport(Glibc)
import Glibc
#endif

extension RedisConnection {
    enum Awaited {
        case reply(RedisReply)
        case timedOut
        case interrupted
    }

    /// Waits up to `timeout` for a reply the server sends on its own (pub/sub messages), returning early when
    /// `interrupt` is signalled. Never leaves the context broken on timeout (unlike a socket timeout).
    func awaitPushedReply(timeout: Duration, interrupt: WakePipe) throws -> Awaited {
        guard let context = rawContext, context.pointee.err == 0 else {
            throw RedisError(.io, "connection is broken", context: "await message")
        }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            var raw: UnsafeMutableRawPointer?
            try check(redisGetReplyFromReader(context, &raw), what: "read message")
            if let raw {
                defer { freeReplyObject(raw) }
                return .reply(Self.reply(from: raw.assumingMemoryBound(to: redisReply.self)))
            }
            let remaining = clock.now.duration(to: deadline)
            if remaining <= .zero { return .timedOut }
            let (seconds, attoseconds) = remaining.components
            let milliseconds = Int32(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
            var descriptors = [
                pollfd(fd: context.pointee.fd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: interrupt.readEnd, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&descriptors, 2, milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                throw RedisError(.io, "poll failed (errno \(errno))", context: "await message")
            }
            if descriptors[1].revents != 0 && interrupt.drain() { return .interrupted }
            if descriptors[0].revents != 0 {
                try check(redisBufferRead(context), what: "read message")
            }
        }
    }
}
