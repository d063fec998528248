/// A maintenance loop written as one round: `runOnce()` does the work and says how long to wait before the next round
/// (nil: the service stops; zero: at once); `run` repeats it until shutdown (or cancellation), then calls `finish()` once. The one shape of the
/// worker's periodic loops (clock sync, token guard, Redis server watch, …), so none writes its own.
public protocol PeriodicService: Service {
    /// One round. Errors are the round's to handle (log, count, back off by returning a longer wait).
    func runOnce() async -> Duration?
    /// Called once after the last round, when the service stops (leave a heartbeat, write what is in memory).
    func finish() async
}

extension PeriodicService {
    public func finish() async {}

    public func run(shutdown: ShutdownSignal) async throws {
        while !shutdown.isTriggered && !Task.isCancelled {
            guard let wait = await runOnce() else { break }
            if wait > .zero { await shutdown.sleep(for: wait) }
        }
        await finish()
    }
}
