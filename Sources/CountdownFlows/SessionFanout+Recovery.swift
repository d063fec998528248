import CountdownDomain

extension SessionFanout {
    /// Most attempts of a session's end push for which its job still waits for the push service's recovery; past
    /// them only the backoff applies, so a session the service keeps refusing while it accepts others is not retried
    /// at every push it accepts. The first minute's tries (`EndRetrySchedule`, about 12) and 8 more.
    static let recoveryWaitAttempts = 20

    /// Whether the push service itself refused some end pushes of a run (`retry`: unavailable, internal error,
    /// timeout, 429), and the longest `Retry-After` it asked for.
    struct RecoveryWait {
        var refused = false
        var retryAfter: Duration = .zero

        mutating func note(_ delivery: Delivery) {
            guard case .retry(let after, _) = delivery else { return }
            refused = true
            if let after { retryAfter = max(retryAfter, after) }
        }
    }

    /// Hands `job` to the end recovery waits when the push service refused some of its pushes (SPEC 10.1).
    func awaitRecovery(_ wait: RecoveryWait, job: CountdownJob, attempts: Int) async {
        guard wait.refused, attempts <= Self.recoveryWaitAttempts else { return }
        await context.endRecovery.awaitRecovery(job, notBefore: wait.retryAfter)
    }
}
