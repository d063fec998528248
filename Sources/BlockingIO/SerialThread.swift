import Foundation

/// A thread owned by the process that runs submitted work one item at a time, in order.
///
/// Blocking C calls (libpq, hiredis, libcurl) run here so they never occupy Swift's cooperative pool.
public final class SerialThread: @unchecked Sendable {
    private let condition = NSCondition()
    private var pending: [() -> Void] = []
    private var head = 0
    private var stopping = false
    public let name: String

    /// Starts the thread at once.
    public init(name: String) {
        self.name = name
        let thread = Thread { [self] in self.loop() }
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Queues `work`; it runs after everything queued before it.
    public func submit(_ work: @escaping @Sendable () -> Void) {
        condition.lock()
        defer { condition.unlock() }
        if stopping {
            // Still run it on a detached thread so continuations never leak; callers see errors from their own checks.
            Thread.detachNewThread(work)
            return
        }
        pending.append(work)
        condition.signal()
    }

    /// Runs `body` on this thread and returns its result to the awaiting task.
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            submit {
                do { continuation.resume(returning: try body()) } catch { continuation.resume(throwing: error) }
            }
        }
    }

    /// Lets queued work finish, then ends the thread. Later submissions run on throwaway threads.
    public func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
    }

    private func loop() {
        // The kernel's name too (at most 15 bytes), so `top -H`, `perf` and /proc/<pid>/task show which thread is which.
        if let comm = fopen("/proc/thread-self/comm", "w") {
            _ = fputs(String(decoding: name.utf8.prefix(15), as: UTF8.self), comm)
            _ = fclose(comm)
        }
        while true {
            condition.lock()
            while head == pending.count && !stopping { condition.wait() }
            if head == pending.count && stopping {
                condition.unlock()
                return
            }
            let work = pending[head]
            // Drop the queue's reference at once: a finished closure must not keep what it captured alive.
            pending[head] = {}
            head += 1
            if head == pending.count {
                pending.removeAll(keepingCapacity: true)
                head = 0
            } else if head > 1024 && head * 2 > pending.count {
                pending.removeFirst(head)
                head = 0
            }
            condition.unlock()
            work()
        }
    }
}
