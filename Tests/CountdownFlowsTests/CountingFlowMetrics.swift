import BlockingIO
import CountdownFlows

/// Counts the flows' skip decisions by "kind/reason".
final class CountingFlowMetrics: FlowMetrics {
    let skips = Locked([String: Int]())

    let undeliverable = Locked([String: Int]())

    /// Also counted by "kind/reason/platform" in `platformSkips`.
    let platformSkips = Locked([String: Int]())

    func skip(kind: String, reason: String, platform: String) {
        skips.withLock { $0[kind + "/" + reason, default: 0] += 1 }
        platformSkips.withLock { $0[kind + "/" + reason + "/" + platform, default: 0] += 1 }
    }

    func countUndeliverableEnd(reason: String) {
        undeliverable.withLock { $0[reason, default: 0] += 1 }
    }

    /// Capped `Retry-After` holds by platform.
    let cappedHolds = Locked([String: Int]())

    func countCappedHolds(_ count: Int, platform: String) {
        cappedHolds.withLock { $0[platform, default: 0] += count }
    }

    let refusedStartOutcomes = Locked(0)

    func countRefusedStartOutcome() {
        refusedStartOutcomes.withLock { $0 += 1 }
    }
}
