import CountdownDomain

extension SessionFanout {
    /// Most attempts of a session's end push for which its job still waits for the push service's recovery; past
    /// them only the backoff applies, so a session the service keeps refusing while it accepts others is not retried
    /// at every push it accepts. The first minute's tries (`EndRetrySchedule`, about 12) and 8 more.
    static let recoveryWaitAttempts = 20

    /// Shortest wait of an end job that found rows held by a `Retry-After`: clocks a little apart cannot make it spin.
    static let heldRetryMinimum: Duration = .seconds(1)

    /// How long an end job that found its rows claimed elsewhere waits before it looks again (SPEC 10.1): until the
    /// earliest `Retry-After` hold among them ends (`heldFor` seconds, at least `heldRetryMinimum`), a claim's length
    /// when none is held or the hold outlasts it. Re-queuing the job replaces its schedule, so waiting a claim's
    /// length would send the held end late.
    static func claimedElsewhereWait(heldFor: Double?, claimSeconds: Int) -> Duration {
        let claim = Duration.seconds(claimSeconds)
        guard let heldFor else { return claim }
        return min(claim, max(heldRetryMinimum, .milliseconds(Int64((heldFor * 1000).rounded(.up)))))
    }

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
