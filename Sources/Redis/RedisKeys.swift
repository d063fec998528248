/// Every Redis key of one Countdown namespace (`COUNTDOWN_NAMESPACE`), spelled here and nowhere else. Every key
/// starts with the hash tag `{namespace}`, so a script's keys share one Redis Cluster slot and one namespace's keys
/// are found with `{namespace}*`.
public struct RedisKeys: Sendable, Hashable {
    public let namespace: String

    public init(namespace: String) { self.namespace = namespace }

    private var tag: String { "{\(namespace)}" }

    /// A key of the delayed queue's layout `layout` (`q1:due`, `q1:data`, …; the queue's `QueueKeys` names them).
    public func queue(_ layout: String, _ name: String) -> String { "\(tag):\(layout):\(name)" }

    /// Sorted set: the live workers, scored by their last heartbeat (Redis time, ms).
    public var fleetWorkers: String { "\(tag):fleet:workers" }
    /// The leases a worker held at its last heartbeat.
    public func fleetLeases(worker: String) -> String { "\(tag):fleet:leases:\(worker)" }
    /// The leases a worker's queue records as it claims, for the takeover of a worker that died between two beats.
    public func fleetClaims(worker: String) -> String { "\(tag):fleet:claims:\(worker)" }
    /// The newest start-ledger time the fleet has seen (only ever forward).
    public var ledgerWatermark: String { "\(tag):fleet:ledger-watermark" }
    /// Set while PostgreSQL is found behind the watermark (the restore guard holds starts).
    public var restoreGuard: String { "\(tag):fleet:restore-guard" }

    /// The reconciler's run lock, and the lock of its failover pass.
    public var reconcileLock: String { "\(tag):reconcile:lock" }
    public var reconcileFailoverLock: String { "\(tag):reconcile:failover-lock" }
    /// The pruner's run lock.
    public var retentionLock: String { "\(tag):retention:lock" }
    /// The broadcast channel keeper's run lock.
    public var broadcastLock: String { "\(tag):broadcast:lock" }
    /// End jobs waiting for the push service to accept pushes again.
    public var endsAwaitingRecovery: String { "\(tag):ends:awaiting-recovery" }

    /// The fleet's push rate limiter, and the slower rate set after a throttle.
    public var pushRate: String { "\(tag):push:rate" }
    public var pushRateSlow: String { "\(tag):push:rate:slow" }
    /// The token guard's window of refusals.
    public var pushTokenGuard: String { "\(tag):push:tokenguard" }
    /// The shared APNs provider token of key `keyID`, and the lock of its refresh.
    public func apnsToken(keyID: String) -> String { "\(tag):push:apns:token:\(keyID)" }
    public func apnsLock(keyID: String) -> String { "\(tag):push:apns:lock:\(keyID)" }

    /// Matches every key of the namespace (for `SCAN … MATCH` when a namespace is cleared).
    public var all: String { "\(tag)*" }
}
