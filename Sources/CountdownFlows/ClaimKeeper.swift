import BlockingIO
import Lifecycle

/// Keeps claims alive while their holder works: every quarter of `seconds` (no more often than every 250 ms), `extend` extends
/// them to `seconds` from now, so work that outlasts a claim (a large stream, a slow gateway, PostgreSQL away for a
/// while, a loaded host) never lets another sender take what this one still holds. A worker that dies stops
/// extending, so its claims still expire and another takes over. `extend` answers whether to go on (false: the
/// claim was lost). Runs as a service of the worker (`run`), or beside one piece of work (`keeping`).
public struct ClaimKeeper: PeriodicService {
    public let name: String
    private let seconds: Int
    private let extend: @Sendable () async -> Bool

    public init(name: String, seconds: Int, extend: @escaping @Sendable () async -> Bool) {
        self.name = name
        self.seconds = seconds
        self.extend = extend
    }

    /// How often the claims are extended.
    var interval: Duration { .milliseconds(max(250, seconds * 250)) }

    public func runOnce() async -> Duration? {
        await extend() ? interval : nil
    }

    /// Runs `body` while extending the claims (first one `interval` from now), until it returns or throws. `body` is
    /// given `lost`, which answers whether the claims were lost (`extend` answered false): it stops at its next point
    /// where what it did is recorded, and leaves the rest to the claims' new holder.
    public func keeping<T>(_ body: (_ lost: @Sendable () -> Bool) async throws -> T) async throws -> T {
        let stop = ShutdownSignal()
        let lost = Locked(false)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                guard await !stop.sleep(for: interval) else { return }
                try await run(shutdown: stop)
                if !stop.isTriggered, !Task.isCancelled { lost.withLock { $0 = true } }
            }
            defer { stop.trigger() }
            return try await body { lost.value }
        }
    }
}
