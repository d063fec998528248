/// What the flows count, implemented by the worker's metrics (and by fakes in tests).
public protocol FlowMetrics: Sendable {
    /// A decision not to send, by job kind and reason.
    func skip(kind: String, reason: String)
    /// A session given up on when its end push's dismissal window closed, by last reason.
    func countUndeliverableEnd(reason: String)
}
