import CountdownDomain

/// Whether some pushes of a run must be sent again later, and when: the longest `Retry-After` of the `retry`
/// answers, 60 s after a configuration error (credentials or project to fix), none otherwise.
struct PushRetry {
    private(set) var needed = false
    private(set) var after: Duration?

    /// Takes one push's answer into account.
    mutating func note(_ delivery: Delivery) {
        switch delivery {
        case .retry(let wait, _):
            needed = true
            if let wait { after = max(after ?? .zero, wait) }
        case .configurationError:
            needed = true
            after = max(after ?? .zero, .seconds(60))
        case .accepted, .tokenRefused, .rejected:
            break
        }
    }

    /// The job's retry with `reason` when some pushes must be sent again.
    func outcome(reason: String = "push_retry") -> HandlerOutcome? {
        needed ? .retry(after: after, reason: reason) : nil
    }
}
