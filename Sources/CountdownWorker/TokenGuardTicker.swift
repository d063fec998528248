import Lifecycle
import Push

/// Re-reads the fleet-wide token guard window every few seconds, so `countdown_push_token_guard_tripped` also
/// resets on a worker that sends nothing (e.g. while starts are paused).
struct TokenGuardTicker: Service {
    let name = "token-guard"
    let tokenGuard: TokenGuardedTransport
    var interval: Duration = .seconds(5)

    func run(shutdown: ShutdownSignal) async throws {
        while !shutdown.isTriggered {
            await tokenGuard.flush()
            await shutdown.sleep(for: interval)
        }
    }
}
