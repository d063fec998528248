import BlockingIO
import Foundation
import Redis

/// The delay queue on Redis: a sorted set of ids by due time, payloads in a hash, leases in a second sorted set,
/// all changed by Lua scripts (atomic, one round trip per batch) and timed by Redis `TIME`.
public final class RedisDelayQueue: DelayQueue {
    public let namespace: String
    public let policy: RetryPolicy
    private let client: RedisClient
    private let keys: QueueKeys
    private let waiters: WakeListeners
    private let claimLog: RedisArgument?

    /// Jobs per script call when enqueuing, claiming, acking (keeps Lua's argument stack and server latency small).
    static let batchLimit = 500

    /// - Parameters:
    ///   - namespace: the `COUNTDOWN_NAMESPACE`; every key is `{namespace}:…`.
    ///   - policy: attempts and backoff for `fail` (and for leases that expire on the last attempt).
    ///   - claimLog: a key (in the namespace's hash tag) where each claim also records its leases atomically, for
    ///     the fleet heartbeat's takeover of a worker killed right after a claim; nil: not recorded.
    public init(client: RedisClient, namespace: String, policy: RetryPolicy = RetryPolicy(), claimLog: String? = nil) {
        self.claimLog = claimLog.map { RedisArgument($0) }
        self.client = client
        self.namespace = namespace
        self.policy = policy
        keys = QueueKeys(namespace: namespace)
        waiters = WakeListeners(configuration: client.configuration, channel: keys.wakeChannel)
    }

    public func enqueue(_ jobs: [NewJob]) async throws {
        guard !jobs.isEmpty else { return }
        let calls = try Self.batches(jobs).map { chunk in
            var args: [RedisArgument] = [keys.wakeChannel]
            args.reserveCapacity(1 + chunk.count * 4)
            for job in chunk {
                try job.validate()
                args.append(RedisArgument(job.id))
                switch job.due {
                case .now: args.append("r"); args.append("0")
                case .after(let delay): args.append("r"); args.append(RedisArgument(max(delay.millisecondsRoundedUp, 0)))
                case .at(let date): args.append("a"); args.append(RedisArgument(Self.milliseconds(date)))
                }
                args.append(RedisArgument(bytes: JobData.encode(kind: job.kind, payload: job.payload)))
            }
            return (keys: keys.all, args: args)
        }
        let replies = try await client.runPipelined(script: QueueScripts.enqueue, calls: calls, retry: .onceOnBrokenConnection)
        for reply in replies { try reply.throwIfError(context: QueueScripts.enqueue.name) }
    }

    @discardableResult
    public func cancel(_ ids: [String]) async throws -> Int {
        try await sum(QueueScripts.cancel, ids: ids, retry: .onceOnBrokenConnection)
    }

    public func claim(max: Int, lease: Duration, limits: [String: Int]) async throws -> ClaimBatch {
        guard max > 0 else { throw DelayQueueError(.invalidArgument, "claim size must be positive (got \(max))") }
        guard lease > .zero else { throw DelayQueueError(.invalidArgument, "lease must be positive") }
        let reply = try await client.run(
            script: QueueScripts.claim, keys: keys.all + (claimLog.map { [$0] } ?? []),
            args: [RedisArgument(Swift.min(max, 1000)), RedisArgument(lease.millisecondsRoundedUp), RedisArgument(policy.maxAttempts)]
                + limits.sorted { $0.key < $1.key }.flatMap { [RedisArgument($0.key), RedisArgument(Swift.max(0, $0.value))] })
        let (batch, unreadable) = try ClaimDecoder.decode(reply)
        for (lease, reason) in unreadable { _ = try await release(lease, mode: "dead", delay: .zero, error: reason) }
        return batch
    }

    @discardableResult
    public func ack(_ leases: [JobLease]) async throws -> Int {
        let batches = Self.batches(leases).map { $0.flatMap { [RedisArgument($0.id), RedisArgument($0.token)] } }
        return try await sum(QueueScripts.ack, batches: batches, retry: .onceOnBrokenConnection)
    }

    @discardableResult
    public func retry(_ lease: JobLease, after delay: Duration, error: String?) async throws -> Bool {
        try await release(lease, mode: "retry", delay: delay, error: error ?? "") == 1
    }

    @discardableResult
    public func postpone(_ lease: JobLease, after delay: Duration, error: String?) async throws -> Bool {
        try await release(lease, mode: "postpone", delay: delay, error: error ?? "") == 1
    }

    @discardableResult
    public func fail(_ lease: JobLease, error: String) async throws -> FailOutcome {
        if lease.attempt >= policy.maxAttempts {
            return try await release(lease, mode: "dead", delay: .zero, error: error) == 0 ? .stale : .deadLettered
        }
        var random = SystemRandomNumberGenerator()
        let delay = policy.delay(afterAttempt: lease.attempt, using: &random)
        return try await release(lease, mode: "retry", delay: delay, error: error) == 0 ? .stale : .retrying(after: delay)
    }

    @discardableResult
    public func extend(_ lease: JobLease, by duration: Duration) async throws -> Bool {
        let reply = try await client.run(
            script: QueueScripts.extend, keys: keys.all,
            args: [RedisArgument(lease.id), RedisArgument(lease.token), RedisArgument(duration.millisecondsRoundedUp)],
            retry: .onceOnBrokenConnection)
        return try Self.integer(reply, QueueScripts.extend.name) > 0
    }

    public func waitForWork(timeout: Duration) async throws {
        try await waiters.wait(timeout: timeout)
    }

    public func deadLetters(limit: Int) async throws -> [DeadLetter] {
        guard limit > 0 else { return [] }
        let reply = try await client.run(script: QueueScripts.deadLetters, keys: keys.all, args: [RedisArgument(limit)])
        return try ClaimDecoder.deadLetters(reply)
    }

    @discardableResult
    public func advance(_ ids: [String]) async throws -> Int {
        try await sum(QueueScripts.advance, ids: ids, leading: [keys.wakeChannel], retry: .onceOnBrokenConnection)
    }

    @discardableResult
    public func redrive(_ ids: [String]) async throws -> Int {
        try await sum(QueueScripts.redrive, ids: ids, leading: [keys.wakeChannel], retry: .never)
    }

    @discardableResult
    public func dropDeadLetters(_ ids: [String]) async throws -> Int {
        try await sum(QueueScripts.drop, ids: ids, retry: .onceOnBrokenConnection)
    }

    public func stats() async throws -> QueueStats {
        let reply = try await client.run(script: QueueScripts.stats, keys: keys.all, retry: .onceOnBrokenConnection)
        guard let values = reply.array?.compactMap(\.integer), values.count == 7 else {
            throw DelayQueueError(.unexpectedReply, "stats answered \(reply)")
        }
        return QueueStats(
            delayed: Int(values[1]), dueNow: Int(values[2]), leased: Int(values[3]), dead: Int(values[4]),
            oldestDueLateness: values[5] < 0 ? .zero : .milliseconds(values[0] - values[5]), paused: Int(values[6]))
    }

    public func jobs(ids: [String]) async throws -> [String: JobInfo] {
        var found: [String: JobInfo] = [:]
        for chunk in Self.batches(ids).map(Array.init) {
            let reply = try await client.run(
                script: QueueScripts.inspect, keys: keys.all, args: chunk.map { RedisArgument($0) }, retry: .onceOnBrokenConnection)
            for info in try ClaimDecoder.jobInfos(reply, ids: chunk) { found[info.id] = info }
        }
        return found
    }

    public func jobIDs(prefix: String, kind: String?) async throws -> [String] {
        var cursor = "0"
        var ids = Set<String>()
        let pattern = RedisArgument(Self.globEscaped(prefix) + "*")
        repeat {
            let reply = try await client.command(["HSCAN", keys.data, RedisArgument(cursor), "MATCH", pattern, "COUNT", "1000"], retry: .onceOnBrokenConnection)
            guard let parts = reply.array, parts.count == 2, let next = parts[0].string, let entries = parts[1].array else {
                throw DelayQueueError(.unexpectedReply, "HSCAN answered \(reply)")
            }
            for index in stride(from: 0, to: entries.count - 1, by: 2) {
                guard let id = entries[index].string else { continue }
                if let kind, JobData.decode(entries[index + 1].bytes ?? [])?.kind != kind { continue }
                ids.insert(id)
            }
            cursor = next
        } while cursor != "0"
        return ids.sorted()
    }

    /// Counted by Redis in steps of `countStep` entries of the data hash (a script per step, so no step holds Redis
    /// for long and only the counts cross the network).
    public func jobCountsByKind() async throws -> [String: Int] {
        var cursor = "0"
        var counts: [String: Int] = [:]
        repeat {
            let reply = try await client.run(script: QueueScripts.countByKind, keys: keys.all,
                                             args: [RedisArgument(cursor), RedisArgument(String(Self.countStep))], retry: .onceOnBrokenConnection)
            guard let parts = reply.array, parts.count % 2 == 1, let next = parts[0].string else {
                throw DelayQueueError(.unexpectedReply, "\(QueueScripts.countByKind.name) answered \(reply)")
            }
            for index in stride(from: 1, to: parts.count, by: 2) {
                guard let kind = parts[index].string, let count = parts[index + 1].integer else {
                    throw DelayQueueError(.unexpectedReply, "\(QueueScripts.countByKind.name) answered \(reply)")
                }
                counts[kind, default: 0] += Int(count)
            }
            cursor = next
        } while cursor != "0"
        return counts
    }

    /// Data-hash entries one `jobCountsByKind` script looks at (HSCAN's COUNT hint).
    static let countStep = 5000

    public func pause(kinds: [String], reason: String) async throws {
        guard !kinds.isEmpty else { throw DelayQueueError(.invalidArgument, "pause needs at least one kind") }
        let reply = try await client.run(
            script: QueueScripts.pause, keys: keys.all, args: [RedisArgument(reason)] + kinds.map { RedisArgument($0) },
            retry: .onceOnBrokenConnection)
        _ = try Self.integer(reply, QueueScripts.pause.name)
    }

    @discardableResult
    public func resume(kinds: [String]) async throws -> Int {
        let reply = try await client.run(
            script: QueueScripts.resume, keys: keys.all, args: [keys.wakeChannel] + kinds.map { RedisArgument($0) },
            retry: .onceOnBrokenConnection)
        return Int(try Self.integer(reply, QueueScripts.resume.name))
    }

    public func pausedKinds() async throws -> [PausedKind] {
        let reply = try await client.command(["HGETALL", keys.paused], retry: .onceOnBrokenConnection)
        try reply.throwIfError(context: "HGETALL paused")
        let parts = reply.array?.compactMap(\.string) ?? []
        return stride(from: 0, to: parts.count - 1, by: 2).map { index in
            let value = parts[index + 1]
            let bar = value.firstIndex(of: "|") ?? value.endIndex
            let since = Double(value[..<bar]).map { Date(timeIntervalSince1970: $0 / 1000) } ?? Date(timeIntervalSince1970: 0)
            let reason = bar < value.endIndex ? String(value[value.index(after: bar)...]) : ""
            return PausedKind(kind: parts[index], reason: reason, since: since)
        }.sorted { $0.kind < $1.kind }
    }

    /// Stops the wake-up listeners (the client stays open: it belongs to the caller).
    public func close() { waiters.close() }

    // MARK: - Helpers

    private func release(_ lease: JobLease, mode: RedisArgument, delay: Duration, error: String) async throws -> Int64 {
        let reply = try await client.run(
            script: QueueScripts.release, keys: keys.all,
            args: [
                RedisArgument(lease.id), RedisArgument(lease.token), mode,
                RedisArgument(max(delay.millisecondsRoundedUp, 0)), RedisArgument(String(error.prefix(2000))), keys.wakeChannel,
            ],
            retry: .onceOnBrokenConnection)
        return try Self.integer(reply, QueueScripts.release.name)
    }

    private func sum(_ script: RedisScript, ids: [String], leading: [RedisArgument] = [], retry: RedisRetry) async throws -> Int {
        try await sum(script, batches: Self.batches(ids).map { leading + $0.map { RedisArgument($0) } }, retry: retry)
    }

    /// Runs `script` once per batch of arguments, all in one pipeline, and adds up the integer replies.
    private func sum(_ script: RedisScript, batches: [[RedisArgument]], retry: RedisRetry) async throws -> Int {
        guard !batches.isEmpty else { return 0 }
        let calls = batches.map { (keys: keys.all, args: $0) }
        let replies = try await client.runPipelined(script: script, calls: calls, retry: retry)
        return try replies.reduce(0) { $0 + Int(try Self.integer($1, script.name)) }
    }

    /// `items` in slices of at most `batchLimit`.
    private static func batches<Item>(_ items: [Item]) -> [ArraySlice<Item>] {
        stride(from: 0, to: items.count, by: batchLimit).map { items[$0..<Swift.min($0 + batchLimit, items.count)] }
    }

    private static func integer(_ reply: RedisReply, _ context: String) throws -> Int64 {
        try reply.throwIfError(context: context)
        guard let value = reply.integer else { throw DelayQueueError(.unexpectedReply, "\(context) answered \(reply)") }
        return value
    }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    private static func globEscaped(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if "*?[]\\".contains(character) { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }
}
