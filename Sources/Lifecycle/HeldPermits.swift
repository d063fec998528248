import Synchronization

/// The `PUSH_CONCURRENCY` permits a batch of pushes holds: each push gives one back as its answer arrives, and the
/// batch gives back the rest when it returns (pushes refused before sending, or sent again after a token refresh,
/// never give back more than the batch took).
public final class HeldPermits: Sendable {
    private let semaphore: AsyncSemaphore
    private let held: Mutex<Int>

    public init(_ count: Int, of semaphore: AsyncSemaphore) {
        self.semaphore = semaphore
        held = Mutex(count)
    }

    /// Permits not yet given back.
    public var count: Int { held.withLock { $0 } }

    public func giveBackOne() {
        let gave = held.withLock { held -> Bool in
            guard held > 0 else { return false }
            held -= 1
            return true
        }
        if gave { semaphore.release(1) }
    }

    public func giveBackRest() {
        let rest = held.withLock { held -> Int in
            defer { held = 0 }
            return held
        }
        if rest > 0 { semaphore.release(rest) }
    }
}
