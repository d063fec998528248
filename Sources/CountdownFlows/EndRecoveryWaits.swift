import CountdownDomain
import Foundation

/// Where end jobs wait for the push service to accept again (SPEC 10.1: while ends wait on a push service that
/// refused them, the first push of any kind it accepts again wakes them, so they go out within 5 s of its recovery
/// instead of at their backoff). The worker implements it fleet-wide (`EndRecoveryWake`).
public protocol EndRecoveryWaits: Sendable {
    /// `job` will retry end pushes the push service did not accept; it may run again as soon as the service accepts
    /// a push, but not within `notBefore` (a 429's `Retry-After`) of now.
    func awaitRecovery(_ job: CountdownJob, notBefore: Duration) async
}
