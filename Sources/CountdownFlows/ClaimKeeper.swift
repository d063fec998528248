import Lifecycle

/// Keeps claims alive while their holder works: every quarter of `seconds` (at least every 250 ms), `extend` extends
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

    /// Runs `body` while extending the claims (first one `interval` from now), until it returns or throws.
    public func keeping<T>(_ body: () async throws -> T) async throws -> T {
        let stop = ShutdownSignal()
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                if await !stop.sleep(for: interval) { try await run(shutdown: stop) }
            }
            defer { stop.trigger() }
            return try await body()
        }
    }
}
