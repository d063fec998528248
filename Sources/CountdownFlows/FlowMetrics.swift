/// What the flows count, implemented by the worker's metrics (and by fakes in tests).
public protocol FlowMetrics: Sendable {
    /// A decision not to send, by job kind, reason and the device's platform (`ios`, `android`, or `any` when the
    /// decision is not about one device).
    func skip(kind: String, reason: String, platform: String)
    /// A session given up on when its end push's dismissal window closed, by last reason.
    func countUndeliverableEnd(reason: String)
    /// `count` end pushes whose `Retry-After` outlasted the dismissal window, held only until it closes, by platform.
    func countCappedHolds(_ count: Int, platform: String)
    /// A start push's outcome the ledger refused to write (`StartLedger.settle`).
    func countRefusedStartOutcome()
}

extension FlowMetrics {
    /// A decision not to send that is not about one device's platform.
    public func skip(kind: String, reason: String) { skip(kind: kind, reason: reason, platform: "any") }

    public func countRefusedStartOutcome() {}
}
