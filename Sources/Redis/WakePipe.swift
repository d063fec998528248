#if canImport(Glibc)
import Glibc
#endif

/// A non-blocking pipe used to interrupt a `poll` from another thread; owns both descriptors.
final class WakePipe: Sendable {
    let readEnd: Int32
    private let writeEnd: Int32

    init() throws {
        var descriptors: [Int32] = [-1, -1]
        guard pipe(&descriptors) == 0 else {
            throw RedisError(.io, "pipe failed (errno \(errno))", context: "wake pipe")
        }
        for descriptor in descriptors {
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        }
        readEnd = descriptors[0]
        writeEnd = descriptors[1]
    }

    deinit {
        Glibc.close(readEnd)
        Glibc.close(writeEnd)
    }

    /// Makes the next (or current) poll on `readEnd` return.
    func signal() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Consumes pending signals; returns whether there were any.
    func drain() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 64)
        var any = false
        while read(readEnd, &buffer, buffer.count) > 0 { any = true }
        return any
    }
}
