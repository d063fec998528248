import CountdownDomain
import CountdownFlows

/// No waiting: ends are retried at their backoff only.
struct BackoffOnlyEnds: EndRecoveryWaits {
    func awaitRecovery(_ job: CountdownJob, notBefore: Duration) async {}
}
