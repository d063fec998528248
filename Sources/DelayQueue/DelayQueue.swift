/// A delayed job queue: jobs with ids, kinds, payload bytes and due times, claimed under leases.
///
/// Semantics shared by `RedisDelayQueue` and the tests' `InMemoryDelayQueue` (TestSupport):
/// - `enqueue` is idempotent per id; enqueuing an existing id replaces its kind, payload and due time and resets its
///   attempts (a leased copy's lease becomes stale, a dead letter comes back to life).
/// - `claim` atomically takes up to `max` due jobs (due by the queue's clock: Redis `TIME`), leases them and counts
///   the attempt. Expired leases go back to waiting (or to the dead letters once attempts are used up).
/// - `ack`, `retry`, `fail` and `extend` act only while the lease token is current; a stale one is a harmless no-op.
/// - A job whose stored data is missing or unreadable is dead-lettered by `claim` and returned as `.corrupt`.
/// - `claim` skips jobs of paused kinds: they stay due (held aside with their due time) until `resume`, and every
///   claimer sees a pause at its next claim.
public protocol DelayQueue: Sendable {
    /// Adds or replaces jobs (one round trip per few hundred jobs).
    func enqueue(_ jobs: [NewJob]) async throws
    /// Removes jobs wherever they are (waiting, leased, dead); returns how many existed.
    @discardableResult func cancel(_ ids: [String]) async throws -> Int
    /// Takes up to `max` due jobs under a lease of `lease`, at most `limits[kind]` of each kind named (0: none); the
    /// others stay due for other claimers, so work handed out as many jobs at once is shared by the fleet.
    func claim(max: Int, lease: Duration, limits: [String: Int]) async throws -> ClaimBatch
    /// Finishes jobs; returns how many leases were still current.
    @discardableResult func ack(_ leases: [JobLease]) async throws -> Int
    /// Puts a leased job back to run again after `delay` (e.g. `Retry-After`); never dead-letters.
    @discardableResult func retry(_ lease: JobLease, after delay: Duration, error: String?) async throws -> Bool
    /// Puts a leased job back to run after `delay` and gives back the attempt its claim counted: for work that
    /// did not really run (a dependency was down, the worker is shutting down). Never dead-letters.
    @discardableResult func postpone(_ lease: JobLease, after delay: Duration, error: String?) async throws -> Bool
    /// Records a failure: backoff with jitter, or the dead letters once the policy's attempts are used up.
    @discardableResult func fail(_ lease: JobLease, error: String) async throws -> FailOutcome
    /// Extends a current lease to `duration` from now; `false` when the lease is stale.
    @discardableResult func extend(_ lease: JobLease, by duration: Duration) async throws -> Bool
    /// Sleeps until woken by newly due work or `timeout` passes, without polling. It may return early (the Redis
    /// queue's first wait, or one after a reconnect, since a wake-up may have been missed): callers claim again.
    func waitForWork(timeout: Duration) async throws
    /// The oldest dead letters first.
    func deadLetters(limit: Int) async throws -> [DeadLetter]
    /// Makes waiting jobs among `ids` that are due later due now, keeping their attempts (leased, paused, dead and
    /// missing ones are left alone); returns how many moved.
    @discardableResult func advance(_ ids: [String]) async throws -> Int
    /// Moves dead letters back to waiting, due now, with fresh attempts; returns how many moved.
    @discardableResult func redrive(_ ids: [String]) async throws -> Int
    /// Deletes dead letters and their data; returns how many existed.
    @discardableResult func dropDeadLetters(_ ids: [String]) async throws -> Int
    /// Counts and the lateness of the oldest due job.
    func stats() async throws -> QueueStats
    /// What the queue holds for each of `ids` (absent ids are missing from the result).
    func jobs(ids: [String]) async throws -> [String: JobInfo]
    /// Ids of all jobs whose id starts with `prefix` (and whose kind is `kind`, when given).
    func jobIDs(prefix: String, kind: String?) async throws -> [String]
    /// How many jobs the queue holds of each kind (waiting, running and dead; a job whose data is missing is not
    /// counted), without listing them: for fleet-wide figures.
    func jobCountsByKind() async throws -> [String: Int]
    /// Stops claiming jobs of `kinds` (non-empty) for every claimer; `reason` is shown by `pausedKinds`.
    func pause(kinds: [String], reason: String) async throws
    /// Claims `kinds` again (every paused kind when empty); returns how many held jobs became claimable.
    @discardableResult func resume(kinds: [String]) async throws -> Int
    /// The kinds paused now.
    func pausedKinds() async throws -> [PausedKind]
}

extension DelayQueue {
    /// Takes up to `max` due jobs under a lease of `lease`, of any kind.
    public func claim(max: Int, lease: Duration) async throws -> ClaimBatch {
        try await claim(max: max, lease: lease, limits: [:])
    }

    public func enqueue(_ job: NewJob) async throws { try await enqueue([job]) }

    @discardableResult
    public func cancel(_ id: String) async throws -> Bool { try await cancel([id]) > 0 }

    @discardableResult
    public func ack(_ lease: JobLease) async throws -> Bool { try await ack([lease]) > 0 }
}
