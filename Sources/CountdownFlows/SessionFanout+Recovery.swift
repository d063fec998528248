import CountdownDomain
import CountdownStore
import Telemetry

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

    /// What the refusals of one end run ask for: how long the job waits at least (`retry`), whether the push service
    /// itself refused some pushes (`retry`: unavailable, internal error, timeout, 429) and the longest `Retry-After` it
    /// asked for, and the `Retry-After` holds (SPEC 10.1: no end job sends to those devices before it has passed,
    /// `EndDeliveryQueries.hold`).
    struct RecoveryWait {
        var retry = PushRetry()
        var refused = false
        var retryAfter: Duration = .zero
        var holds: [EndDeliveryQueries.Hold] = []

        /// Notes one delivery; a `Retry-After` holds `hold`'s end claim when given.
        mutating func note(_ delivery: Delivery, holding hold: (device: String, user: String?)? = nil) {
            retry.note(delivery)
            guard case .retry(let after, _) = delivery else { return }
            refused = true
            guard let after else { return }
            retryAfter = max(retryAfter, after)
            if let hold { holds.append(.init(device: hold.device, user: hold.user, seconds: after.timeInterval)) }
        }
    }

    /// What an end run's settlement (`ledger`) asks for: the ends given up on are counted and logged (`what`
    /// undeliverable, with `fields`); while ends are still retried, `job` is handed to the end recovery waits when the
    /// push service refused some of its pushes, and retried on the schedule, not before the run's wait (nil: none is
    /// retried). Neither wait outlasts the dismissal window of the newest failing end (a `Retry-After` may ask for up
    /// to a day); holds the window cut short (`EndDeliveryQueries.hold`) are logged and counted.
    func retryEnds(_ run: RecoveryWait, ledger: EndDeliveryQueries.Outcome, job: CountdownJob, platform: String, what: String,
                   _ fields: [String: LogValue], reason: String) async -> HandlerOutcome? {
        for why in ledger.undeliverable {
            context.metrics.countUndeliverableEnd(reason: why)
            context.logger.error("\(what) undeliverable: the dismissal window closed", fields.merging(["reason": .string(why)]) { $1 })
        }
        if ledger.holdsCapped > 0 {
            context.metrics.countCappedHolds(ledger.holdsCapped, platform: platform)
            context.logger.warn("a Retry-After outlasts the dismissal window; the end is held only until the window closes", [
                "job": .string(job.id), "platform": .string(platform), "held": .int(ledger.holdsCapped), "asked_s": .seconds(run.retryAfter),
            ])
        }
        guard ledger.retrying > 0 else { return nil }
        let windowLeft = Duration.seconds(max(0, Double(EndDeliveryQueries.window(context.settings)) - ledger.failingForSeconds))
        if run.refused, ledger.attempts <= Self.recoveryWaitAttempts {
            await context.endRecovery.awaitRecovery(job, notBefore: min(run.retryAfter, windowLeft))
        }
        return .retryOnSchedule(after: max(min(run.retry.after ?? .zero, windowLeft), EndDeliveryQueries.backoff(ledger)), reason: reason)
    }
}
