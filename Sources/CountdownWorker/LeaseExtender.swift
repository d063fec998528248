import DelayQueue
import Lifecycle

/// Extends the leases of the jobs a dispatcher runs, every third of a lease, so another worker never claims a job
/// whose runner is alive. A service of the dispatcher's own task group: it stops once the jobs have finished or been
/// handed back.
struct LeaseExtender: PeriodicService {
    let name = "lease-extender"
    let queue: any DelayQueue
    let lease: Duration
    let held: @Sendable () -> [JobLease]

    func runOnce() async -> Duration? {
        for held in held() { _ = try? await queue.extend(held, by: lease) }
        return lease / 3
    }
}
