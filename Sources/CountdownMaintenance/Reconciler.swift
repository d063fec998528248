import CountdownDomain
import CountdownStore
import DelayQueue
import Foundation
import Postgres
import Telemetry

/// Rebuilds the jobs PostgreSQL implies but Redis lacks (after a flush or failover), corrects due times that
/// drifted, and removes pre-start jobs of streams that no longer need them. Runs under the same per-stream
/// locks as the relay, so it never races a newer plan.
public struct Reconciler: Sendable {
    public struct Report: Sendable, Codable, Equatable {
        public var streamsChecked = 0
        public var added: [String: Int] = [:]
        public var corrected: [String: Int] = [:]
        public var removed: [String: Int] = [:]
        public var dryRun = false
        /// Streams that could not be read or planned (quarantined unless dry-running).
        public var quarantined: [String] = []
        /// Streams whose active reminders were left to reminder pages still waiting or running, instead of a new
        /// run of their fan-out (which could remind the pages' users twice).
        public var remindersLeftToPages: [String] = []

        public var totalChanges: Int { added.values.reduce(0, +) + corrected.values.reduce(0, +) + removed.values.reduce(0, +) }
    }

    let session: PostgresSession
    let queue: any DelayQueue
    let planner: JobPlanner
    let batchSize: Int

    /// - Parameter session: a dedicated connection (each batch is one transaction across the queue calls).
    public init(session: PostgresSession, queue: any DelayQueue, planner: JobPlanner, batchSize: Int = 500) {
        self.session = session
        self.queue = queue
        self.planner = planner
        self.batchSize = batchSize
    }

    /// Checks every stream that can still need a job; `progress(done, total)` after each batch.
    public func run(dryRun: Bool = false, progress: @Sendable (Int, Int) -> Void = { _, _ in }) async throws -> Report {
        var report = Report(dryRun: dryRun)
        if !dryRun {
            // The pause first (SPEC 10.3): jobs rebuilt into a Redis that lost its data must not be claimed as if nothing
            // were paused.
            let truth = try await session.run { try PauseQueries.all(on: $0) }
            try await PauseSync.apply(truth, to: queue)
        }
        let expireAfter = planner.settings.expireAfterSeconds
        let total = try await session.run { try ReconcileQueries.count(expireAfter: expireAfter, on: $0) }
        var cursor = ""
        while true {
            let after = cursor
            let limit = batchSize
            let batch: [String]
            do {
                batch = try await reconcileBatch(report: &report, dryRun: dryRun) {
                    try ReconcileQueries.page(after: after, limit: limit, expireAfter: expireAfter, on: $0)
                }
            } catch where StoreError.rowDataReason(of: error) != nil {
                batch = try await reconcileOneByOne(after: after, limit: limit, report: &report, dryRun: dryRun)
            }
            report.streamsChecked += batch.count
            progress(report.streamsChecked, max(total, report.streamsChecked))
            guard let last = batch.last, batch.count == limit else { break }
            cursor = last
        }
        try await reconcileRetired(report: &report, dryRun: dryRun)
        try await removeOrphans(report: &report, dryRun: dryRun)
        return report
    }

    /// Sessions retired by a device takeover whose session-end job was lost (with Redis, or by a worker that did
    /// not know the outbox topic during an upgrade) get it back.
    private func reconcileRetired(report: inout Report, dryRun: Bool) async throws {
        let limit = batchSize * 20
        let (pairs, now) = try await session.run { connection in
            (try RetiredSessionQueries.pending(limit: limit, on: connection), try StreamStateQueries.now(on: connection))
        }
        guard !pairs.isEmpty else { return }
        let jobs = pairs.map { CountdownJob.sessionEnd(stream: $0.stream, device: $0.device) }
        let existing = try await queue.jobs(ids: jobs.map(\.id))
        let missing = jobs.filter { existing[$0.id] == nil }
        guard !missing.isEmpty else { return }
        report.added[CountdownJob.Kind.sessionEnd.rawValue, default: 0] += missing.count
        if !dryRun { try await QueueOperation.apply(missing.map { .enqueue($0, dueAt: now) }, to: queue, now: now) }
    }

    /// Reconciles the streams `page` returns in one transaction across the queue calls, holding their locks: it
    /// never commits on a connection that replaced the one that took them. Returns the ids checked.
    private func reconcileBatch(report: inout Report, dryRun: Bool,
                                _ page: @escaping @Sendable (PostgresConnection) throws -> [String]) async throws -> [String] {
        try await session.transaction { transaction -> [String] in
            let batch = try await transaction.run { connection -> (ids: [String], states: [String: StreamState], now: Date) in
                let ids = try page(connection)
                try StreamStateQueries.lockStreams(ids, on: connection)
                var states = try StreamStateQueries.load(ids, on: connection)
                // A completed fan-out does not cover devices whose backfill job was lost with Redis.
                for id in try ReconcileQueries.streamsWithUnstartedDevices(ids, on: connection) { states[id]?.startDoneFor = nil }
                return (ids, states, try StreamStateQueries.now(on: connection))
            }
            try await reconcile(batch.states, now: batch.now, report: &report, dryRun: dryRun)
            return batch.ids
        }
    }

    /// A batch failed on a row: each stream of the page in its own transaction, and a stream that cannot be read
    /// or planned goes to the quarantine (unless dry-running) while the others are reconciled.
    private func reconcileOneByOne(after cursor: String, limit: Int, report: inout Report, dryRun: Bool) async throws -> [String] {
        let expireAfter = planner.settings.expireAfterSeconds
        let ids = try await session.run { try ReconcileQueries.page(after: cursor, limit: limit, expireAfter: expireAfter, on: $0) }
        for id in ids {
            do {
                _ = try await reconcileBatch(report: &report, dryRun: dryRun) { _ in [id] }
            } catch {
                guard let reason = StoreError.rowDataReason(of: error) else { throw error }
                report.quarantined.append(id)
                if dryRun { continue }
                try await session.run { try QuarantineQueries.record(.stream, key: id, foundBy: "reconciler", reason: reason, on: $0) }
            }
        }
        return ids
    }

    private func reconcile(_ states: [String: StreamState], now: Date, report: inout Report, dryRun: Bool) async throws {
        var rerunReminders = Set<String>()
        let desired = states.values.flatMap { state -> [QueueOperation] in
            var state = state
            // Reminders still active after the reminder time (created late, or their job was lost) need a run.
            if state.hasActiveReminders && now >= planner.reminderDue(state.plannedStartAt, now: now) {
                if state.reminderDoneFor != nil { rerunReminders.insert(state.id) }
                state.reminderDoneFor = nil
            }
            // An update still pending for the current planned start (its job may have been lost with Redis).
            return planner.planStream(state, now: now, rescheduled: state.needsUpdate)
        }
        let wanted = desired.compactMap { operation -> (CountdownJob, Date)? in
            if case .enqueue(let job, let due) = operation { return (job, due) }
            return nil
        }
        let existing = try await queue.jobs(ids: wanted.map(\.0.id))
        // Read after `existing`: the reminder job stays leased until its pages are queued, so a fan-out seen done
        // without its reminder job has its pages in the queue by now.
        let paging = try await streamsWithLivePages(among: rerunReminders.filter { existing[CountdownJob.streamJobID(.reminder, stream: $0)] == nil })
        report.remindersLeftToPages.append(contentsOf: paging.sorted())
        var repairs: [QueueOperation] = []
        for (job, due) in wanted {
            if job.kind == .reminder, let stream = job.streamID, paging.contains(stream) { continue }
            switch existing[job.id]?.state {
            case nil:
                repairs.append(.enqueue(job, dueAt: due))
                report.added[job.kind.rawValue, default: 0] += 1
            case .waiting(let queuedDue) where abs(queuedDue.timeIntervalSince(due)) > 2 && due > now:
                repairs.append(.enqueue(job, dueAt: due))
                report.corrected[job.kind.rawValue, default: 0] += 1
            default:
                break
            }
        }
        if !dryRun { try await QueueOperation.apply(repairs, to: queue, now: now) }
    }

    /// Of `streams`, those with a reminder page still waiting or running. Their remaining active reminders belong to
    /// those pages (a page retries what it could not send): running the reminder job again would page the same
    /// users with other bounds while their pushes are in flight, and remind them twice. A dead-lettered page does
    /// not count, so what it held is paged again.
    private func streamsWithLivePages(among streams: Set<String>) async throws -> Set<String> {
        guard !streams.isEmpty else { return [] }
        let kind = CountdownJob.Kind.reminderPage.rawValue
        let infos = try await queue.jobs(ids: try await queue.jobIDs(prefix: kind + ":", kind: kind))
        var live = Set<String>()
        for info in infos.values {
            if case .dead = info.state { continue }
            guard let stream = Self.stream(of: info), streams.contains(stream) else { continue }
            live.insert(stream)
        }
        return live
    }

    /// The stream of a queued job, when it decodes and has one.
    private static func stream(of info: JobInfo) -> String? {
        guard let kind = info.kind, let payload = info.payload, case .success(let job) = CountdownJob.decode(kind: kind, payload: payload) else { return nil }
        return job.streamID
    }

    /// Pre-start jobs (start, reminder, expire, update) whose stream is gone or no longer scheduled.
    private func removeOrphans(report: inout Report, dryRun: Bool) async throws {
        for kind in [CountdownJob.Kind.start, .reminder, .reminderPage, .expire, .update] {
            let ids = try await queue.jobIDs(prefix: kind.rawValue + ":", kind: kind.rawValue)
            guard !ids.isEmpty else { continue }
            let infos = try await queue.jobs(ids: ids)
            let streamOf = infos.compactMapValues(Self.stream(of:))
            let streams = Array(Set(streamOf.values))
            let scheduled = try await session.run { try StreamQueries.scheduled(streams, on: $0) }
            let orphans = streamOf.filter { !scheduled.contains($0.value) }.map(\.key)
            guard !orphans.isEmpty else { continue }
            report.removed[kind.rawValue, default: 0] += orphans.count
            if !dryRun { try await queue.cancel(orphans) }
        }
    }
}
