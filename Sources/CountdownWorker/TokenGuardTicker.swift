import Lifecycle
import Push

/// Re-reads the fleet-wide token guard window every few seconds, so `countdown_push_token_guard_tripped` also
/// resets on a worker that sends nothing (e.g. while starts are paused).
struct TokenGuardTicker: PeriodicService {
    let name = "token-guard"
    let tokenGuard: TokenGuardedTransport
    var interval: Duration = .seconds(5)

    func runOnce() async -> Duration? {
        await tokenGuard.flush()
        return interval
    }
}
