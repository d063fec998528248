import BlockingIO
import DelayQueue
import Foundation

/// The delay queue in memory, with the same semantics as `RedisDelayQueue`, for unit tests of code that uses a
/// queue. Time comes from `clock`; jitter from `random` (seeded generators make backoff reproducible).
public final class InMemoryDelayQueue: DelayQueue {
    private struct Job {
        var kind: String
        var payload: [UInt8]
        var dueAt: Date
        var attempts = 0
        var lastError = ""
        var lease: (token: String, until: Date)?
        var dead: Date?
    }

    private struct State {
        var jobs: [String: Job] = [:]
        var sequence = 0
        var waiters: [UUID: CheckedContinuation<Void, Never>] = [:]
        var paused: [String: PausedKind] = [:]
    }

    public let policy: RetryPolicy
    private let clock: @Sendable () -> Date
    private let random: @Sendable () -> Double
    private let state = Locked(State())

    /// - Parameters:
    ///   - clock: the queue's notion of now (Redis `TIME` in the real queue).
    ///   - random: draws the jitter of each backoff, a number in `0...1`.
    public init(
        policy: RetryPolicy = RetryPolicy(), clock: @escaping @Sendable () -> Date = { Date() },
        random: @escaping @Sendable () -> Double = { Double.random(in: 0...1) }
    ) {
        self.policy = policy
        self.clock = clock
        self.random = random
    }

    public func enqueue(_ jobs: [NewJob]) async throws {
        for job in jobs { try job.validate() }
        let now = clock()
        changeWaking { state in
            for job in jobs {
                state.jobs[job.id] = Job(kind: job.kind, payload: job.payload, dueAt: Self.dueAt(job.due, now: now))
            }
            return ((), true)
        }
    }

    @discardableResult
    public func cancel(_ ids: [String]) async throws -> Int {
        state.withLock { state in ids.reduce(0) { $0 + (state.jobs.removeValue(forKey: $1) == nil ? 0 : 1) } }
    }

    public func claim(max: Int, lease: Duration, limits: [String: Int]) async throws -> ClaimBatch {
        guard max > 0 else { throw DelayQueueError(.invalidArgument, "claim size must be positive (got \(max))") }
        guard lease > .zero else { throw DelayQueueError(.invalidArgument, "lease must be positive") }
        let now = clock()
        let maxAttempts = policy.maxAttempts
        return state.withLock { state in
            for (id, job) in state.jobs where job.dead == nil {
                guard let held = job.lease, held.until <= now else { continue }
                var job = job
                job.lease = nil
                if job.attempts >= maxAttempts {
                    job.dead = now
                    job.lastError = "lease expired on the last attempt" + (job.lastError.isEmpty ? "" : " (last error: \(job.lastError))")
                } else {
                    job.dueAt = now
                    job.lastError = "lease expired"
                }
                state.jobs[id] = job
            }
            let due = state.jobs.filter {
                $0.value.dead == nil && $0.value.lease == nil && $0.value.dueAt <= now && state.paused[$0.value.kind] == nil
            }
                .sorted { ($0.value.dueAt, $0.key) < ($1.value.dueAt, $1.key) }
            var left = limits
            let allowed = due.filter { _, job in
                guard let limit = left[job.kind] else { return true }
                left[job.kind] = limit - 1
                return limit > 0
            }.prefix(Swift.min(max, 1000))
            var items: [ClaimedItem] = []
            if !allowed.isEmpty {
                state.sequence += 1
                let token = String(state.sequence)
                for (id, var job) in allowed {
                    job.attempts += 1
                    job.lease = (token, now.addingTimeInterval(lease.timeInterval))
                    state.jobs[id] = job
                    let claimed = ClaimedJob(
                        id: id, kind: job.kind, payload: job.payload, dueAt: job.dueAt,
                        lease: JobLease(id: id, token: token, attempt: job.attempts))
                    items.append(.job(claimed))
                }
            }
            let nextTimes = state.jobs.values.compactMap { job -> Date? in
                if job.dead != nil || (job.lease == nil && state.paused[job.kind] != nil) { return nil }
                return job.lease?.until ?? job.dueAt
            }
            let next = nextTimes.min().map { Duration.milliseconds(Int64(($0.timeIntervalSince(now) * 1000).rounded())) }
            return ClaimBatch(items: items, claimedAt: now, nextWakeIn: next)
        }
    }

    @discardableResult
    public func ack(_ leases: [JobLease]) async throws -> Int {
        state.withLock { state in
            leases.reduce(0) { count, lease in
                guard Self.isCurrent(lease, in: state) else { return count }
                state.jobs[lease.id] = nil
                return count + 1
            }
        }
    }

    @discardableResult
    public func retry(_ lease: JobLease, after delay: Duration, error: String?) async throws -> Bool {
        reschedule(lease, after: delay, error: error ?? "")
    }

    @discardableResult
    public func postpone(_ lease: JobLease, after delay: Duration, error: String?) async throws -> Bool {
        let given = state.withLock { state -> Bool in
            guard Self.isCurrent(lease, in: state), let attempts = state.jobs[lease.id]?.attempts else { return false }
            state.jobs[lease.id]?.attempts = max(0, attempts - 1)
            return true
        }
        return given && reschedule(lease, after: delay, error: error ?? "")
    }

    @discardableResult
    public func fail(_ lease: JobLease, error: String) async throws -> FailOutcome {
        if lease.attempt >= policy.maxAttempts {
            let now = clock()
            let buried = state.withLock { state -> Bool in
                guard Self.isCurrent(lease, in: state) else { return false }
                state.jobs[lease.id]?.lease = nil
                state.jobs[lease.id]?.dead = now
                state.jobs[lease.id]?.lastError = error
                return true
            }
            return buried ? .deadLettered : .stale
        }
        let delay = policy.delay(afterAttempt: lease.attempt, draw: random())
        return reschedule(lease, after: delay, error: error) ? .retrying(after: delay) : .stale
    }

    @discardableResult
    public func extend(_ lease: JobLease, by duration: Duration) async throws -> Bool {
        let until = clock().addingTimeInterval(duration.timeInterval)
        return state.withLock { state in
            guard Self.isCurrent(lease, in: state) else { return false }
            state.jobs[lease.id]?.lease?.until = until
            return true
        }
    }

    public func waitForWork(timeout: Duration) async throws {
        let id = UUID()
        let timer = Task {
            try? await Task.sleep(for: timeout)
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
        await withCheckedContinuation { continuation in
            state.withLock { $0.waiters[id] = continuation }
        }
        timer.cancel()
    }

    public func deadLetters(limit: Int) async throws -> [DeadLetter] {
        state.withLock { state in
            state.jobs.compactMap { id, job -> DeadLetter? in
                guard let dead = job.dead else { return nil }
                return DeadLetter(id: id, kind: job.kind, payload: job.payload, attempts: job.attempts, lastError: job.lastError, deadAt: dead)
            }
            .sorted { ($0.deadAt, $0.id) < ($1.deadAt, $1.id) }
            .prefix(Swift.max(limit, 0)).map { $0 }
        }
    }

    @discardableResult
    public func advance(_ ids: [String]) async throws -> Int {
        let now = clock()
        return changeWaking { state in
            var moved = 0
            for id in ids {
                guard let job = state.jobs[id], job.dead == nil, job.lease == nil, job.dueAt > now else { continue }
                state.jobs[id]?.dueAt = now
                moved += 1
            }
            return (moved, moved > 0)
        }
    }

    @discardableResult
    public func redrive(_ ids: [String]) async throws -> Int {
        let now = clock()
        return changeWaking { state in
            var moved = 0
            for id in ids where state.jobs[id]?.dead != nil {
                state.jobs[id]?.dead = nil
                state.jobs[id]?.attempts = 0
                state.jobs[id]?.lastError = ""
                state.jobs[id]?.dueAt = now
                moved += 1
            }
            return (moved, moved > 0)
        }
    }

    @discardableResult
    public func dropDeadLetters(_ ids: [String]) async throws -> Int {
        state.withLock { state in
            ids.reduce(0) { count, id in
                guard state.jobs[id]?.dead != nil else { return count }
                state.jobs[id] = nil
                return count + 1
            }
        }
    }

    public func stats() async throws -> QueueStats {
        let now = clock()
        return state.withLock { state in
            let waiting = state.jobs.values.filter { $0.dead == nil && $0.lease == nil }
            let due = waiting.filter { $0.dueAt <= now }
            let held = due.filter { state.paused[$0.kind] != nil }
            let claimable = due.filter { state.paused[$0.kind] == nil }
            let oldest = claimable.map(\.dueAt).min().map { Duration.milliseconds(Int64((now.timeIntervalSince($0) * 1000).rounded())) }
            return QueueStats(
                delayed: waiting.count - due.count, dueNow: due.count,
                leased: state.jobs.values.filter { $0.dead == nil && $0.lease != nil }.count,
                dead: state.jobs.values.filter { $0.dead != nil }.count, oldestDueLateness: oldest ?? .zero, paused: held.count)
        }
    }

    public func jobs(ids: [String]) async throws -> [String: JobInfo] {
        state.withLock { state in
            var found: [String: JobInfo] = [:]
            for id in ids {
                guard let job = state.jobs[id] else { continue }
                let jobState: JobInfo.State =
                    if let dead = job.dead { .dead(since: dead) } else if let lease = job.lease { .leased(until: lease.until) } else { .waiting(dueAt: job.dueAt) }
                found[id] = JobInfo(id: id, kind: job.kind, payload: job.payload, state: jobState, attempts: job.attempts, lastError: job.lastError)
            }
            return found
        }
    }

    public func jobIDs(prefix: String, kind: String?) async throws -> [String] {
        state.withLock { state in
            state.jobs.filter { $0.key.hasPrefix(prefix) && (kind == nil || $0.value.kind == kind) }.keys.sorted()
        }
    }

    public func jobCountsByKind() async throws -> [String: Int] {
        state.withLock { state in state.jobs.values.reduce(into: [:]) { counts, job in counts[job.kind, default: 0] += 1 } }
    }

    public func pause(kinds: [String], reason: String) async throws {
        guard !kinds.isEmpty else { throw DelayQueueError(.invalidArgument, "pause needs at least one kind") }
        let now = clock()
        state.withLock { state in
            for kind in kinds { state.paused[kind] = PausedKind(kind: kind, reason: reason, since: now) }
        }
    }

    @discardableResult
    public func resume(kinds: [String]) async throws -> Int {
        let now = clock()
        return changeWaking { state in
            let resumed = kinds.isEmpty ? Set(state.paused.keys) : Set(kinds)
            for kind in resumed { state.paused[kind] = nil }
            let moved = state.jobs.values.filter {
                $0.dead == nil && $0.lease == nil && $0.dueAt <= now && resumed.contains($0.kind)
            }.count
            return (moved, moved > 0)
        }
    }

    public func pausedKinds() async throws -> [PausedKind] {
        state.withLock { state in state.paused.values.sorted { $0.kind < $1.kind } }
    }

    // MARK: - Helpers

    private func reschedule(_ lease: JobLease, after delay: Duration, error: String) -> Bool {
        let dueAt = clock().addingTimeInterval(delay.timeInterval)
        return changeWaking { state in
            guard Self.isCurrent(lease, in: state) else { return (false, false) }
            state.jobs[lease.id]?.lease = nil
            state.jobs[lease.id]?.dueAt = dueAt
            state.jobs[lease.id]?.lastError = error
            return (true, true)
        }
    }

    /// Runs `change` under the lock; when it says `wake`, wakes the waiting claimers once the lock is released.
    private func changeWaking<T: Sendable>(_ change: (inout State) -> (result: T, wake: Bool)) -> T {
        let (result, woken) = state.withLock { state in
            let (result, wake) = change(&state)
            return (result, wake ? Self.takeWaiters(&state) : [])
        }
        woken.forEach { $0.resume() }
        return result
    }

    private static func isCurrent(_ lease: JobLease, in state: State) -> Bool {
        guard let job = state.jobs[lease.id], job.dead == nil, let held = job.lease else { return false }
        return held.token == lease.token
    }

    private static func takeWaiters(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        let waiters = Array(state.waiters.values)
        state.waiters.removeAll()
        return waiters
    }

    private static func dueAt(_ due: JobDue, now: Date) -> Date {
        switch due {
        case .now: now
        case .after(let delay): now.addingTimeInterval(delay.timeInterval)
        case .at(let date): date
        }
    }
}
