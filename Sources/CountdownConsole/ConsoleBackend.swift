import CountdownCommands
import CountdownDomain
import CountdownMaintenance
import CountdownStore
import DelayQueue
import Foundation
import Postgres

/// The console's data and effects: pages read through `countdown-admin`'s reports and `ConsoleReadQueries`, actions
/// done as `countdown-admin` does them, the pause in PostgreSQL (`ConsoleBackend+Pause`), audit rows through `AuditQueries`.
public final class ConsoleBackend: Sendable {
    let database: PostgresClient
    let queue: any DelayQueue
    let probe: RedisFleetProbe?
    let settings: FlowSettings
    let transport: PushTransportKind

    public init(database: PostgresClient, queue: any DelayQueue, probe: RedisFleetProbe?, settings: FlowSettings, transport: PushTransportKind) {
        self.database = database
        self.queue = queue
        self.probe = probe
        self.settings = settings
        self.transport = transport
    }

    /// The store seams on `database` (the operator's reports and actions).
    var store: StoreClient { StoreClient(database) }

    // MARK: pages

    public func fleet() async throws -> ConsolePages.Fleet {
        let stats = try await SystemStats.load(database: store, queue: queue, settings: settings)
        let quarantined = try await store.quarantined()
        var workers: [WorkerHeartbeat]?
        var tokenGuard: TokenGuardState?
        var restoreGuard: String?
        if let probe {
            workers = try await probe.workers()
            tokenGuard = try await probe.tokenGuard()
            restoreGuard = try await probe.restoreGuard()
        }
        var page = ConsolePages.Fleet(stats: stats, quarantined: quarantined, paused: stats.paused, workers: workers, tokenGuard: tokenGuard,
                                      restoreGuard: restoreGuard, charts: try await charts())
        page.verdict = FleetVerdict.of(page)
        return page
    }

    /// The fleet page's charts of the last hour.
    func charts() async throws -> ConsolePages.FleetCharts {
        let ahead = max(settings.startLeadSeconds, settings.reminderLeadSeconds) + Int(FlowSettings.earlyTolerance.rounded(.up))
        let lead = settings.startLeadSeconds
        let (pushes, lateness) = try await database.withConnection { connection in
            (try FleetChartQueries.pushes(aheadSeconds: ahead, on: connection),
             try FleetChartQueries.startLateness(aheadSeconds: ahead, leadSeconds: lead, on: connection))
        }
        let hourAgo = Date().addingTimeInterval(-3600)
        var dead: [Date: Int] = [:]
        for letter in try await queue.deadLetters(limit: 1000) where letter.deadAt > hourAgo {
            dead[Date(timeIntervalSince1970: (letter.deadAt.timeIntervalSince1970 / 60).rounded(.down) * 60), default: 0] += 1
        }
        return ConsolePages.FleetCharts(pushes: pushes, startLateness: lateness,
                                        deadLetters: dead.sorted { $0.key < $1.key }.map { ConsolePages.DeadPerMinute(minute: $0.key, count: $0.value) })
    }

    public func stream(_ id: String) async throws -> ConsolePages.Stream? {
        guard let report = try await StreamReport.load(id, database: store, queue: queue, settings: settings, transport: transport) else {
            return nil
        }
        // Pauses count while the stream's pushes could go out: from before its start window to after its start.
        let from = report.startWindowOpensAt.addingTimeInterval(-3600)
        let to = max(report.plannedStartAt.addingTimeInterval(6 * 3600), report.databaseNow)
        let devices = Set(report.devices.map(\.deviceID))
        let story = try await database.withConnection { connection in
            ConsoleTimeline.Story(
                report: report, history: try ConsoleReadQueries.plannedStartHistory(id, on: connection),
                // The stream's own clearings, and its devices' device tokens cleared for any stream (they decide reach).
                invalidations: try (ConsoleReadQueries.invalidations(stream: id, on: connection)
                    + devices.sorted().prefix(200).flatMap { try ConsoleReadQueries.invalidations(device: $0, limit: 20, on: connection) })
                    .reduce(into: [Int: ConsoleReadQueries.Invalidation]()) { $0[$1.id] = $1.masked() }.values.sorted { $0.id < $1.id },
                accepted: try ConsoleReadQueries.acceptedStates(stream: id, on: connection),
                reminders: try ConsoleReadQueries.reminderDeliveries(stream: id, on: connection),
                actions: try ConsoleReadQueries.operatorActions(stream: id, from: from, to: to, on: connection))
        }
        let ownInvalidations = story.invalidations.filter { $0.streamID == id }
        let channels = try await database.withConnection { try BroadcastChannels.all(stream: id, on: $0) }
        return ConsolePages.Stream(report: report, plannedStartHistory: story.history, invalidations: ownInvalidations,
                                   unreachable: ConsoleTimeline.unreachable(report, invalidations: story.invalidations).mapValues(\.invalidatedAt),
                                   timeline: ConsoleTimeline.stream(story), channels: channels)
    }

    public func device(_ id: String) async throws -> ConsolePages.Device? {
        try await database.withConnection { connection in
            guard let device = try ConsoleReadQueries.device(id, on: connection) else { return nil }
            return ConsolePages.Device(
                device: device, startDecisions: try ConsoleReadQueries.startDecisions(device: id, on: connection),
                sessions: try ConsoleReadQueries.sessions(device: id, on: connection),
                invalidations: try ConsoleReadQueries.invalidations(device: id, on: connection)).masked()
        }
    }

    public func user(_ id: String) async throws -> ConsolePages.User? {
        try await database.withConnection { connection in
            guard let user = try ConsoleReadQueries.user(id, on: connection) else { return nil }
            return ConsolePages.User(
                user: user, devices: try ConsoleReadQueries.devices(ofUser: id, on: connection).map { $0.masked() },
                streams: try ConsoleReadQueries.participations(ofUser: id, on: connection),
                reminders: try ConsoleReadQueries.reminders(ofUser: id, on: connection))
        }
    }

    public func dead(limit: Int) async throws -> ConsolePages.Dead {
        let letters = try await queue.deadLetters(limit: limit).map {
            ConsolePages.DeadLetter(id: $0.id, kind: $0.kind, attempts: $0.attempts, lastError: $0.lastError, deadAt: $0.deadAt)
        }
        return ConsolePages.Dead(deadLetters: letters, limit: limit)
    }

    public func quarantine() async throws -> ConsolePages.Quarantine {
        ConsolePages.Quarantine(entries: try await store.quarantineEntries())
    }

    public func tokens(since text: String) async throws -> ConsolePages.Tokens {
        let since = try Self.since(text)
        let entries = try await TokenInvalidationLog(database: store).list(since: since, limit: ConsoleReadQueries.defaultLimit * 5)
        return ConsolePages.Tokens(since: text, invalidations: entries)
    }

    public func audit(limit: Int, before: Int?) async throws -> ConsolePages.Audit {
        let entries = try await database.withConnection { try AuditQueries.list(limit: limit, before: before, on: $0) }
        return ConsolePages.Audit(entries: entries, nextBefore: entries.count == limit ? entries.last?.id : nil)
    }

    /// Things whose id is or starts with `query`, streams whose title and users whose name contain it.
    public func search(_ query: String, limit: Int = 20) async throws -> ConsolePages.Search {
        let found = try await database.withConnection { try ConsoleReadQueries.search(query, limit: limit, on: $0) }
        let results = found.map {
            ConsolePages.SearchResult(kind: $0.kind, id: $0.id, label: $0.label, how: $0.how, path: "/\($0.kind)s/\(ConsoleAction.segment($0.id))")
        }
        var matches: [String: String] = [:]
        for result in results where result.how == "id" { matches[result.kind] = result.path }
        return ConsolePages.Search(query: query, matches: matches, results: results)
    }

    /// Streams of `status` by planned start, within `starting` ahead when given, after the stream `after`.
    public func streams(status: String, starting: String?, after: String?, limit: Int) async throws -> ConsolePages.Streams {
        guard StreamStatus(rawValue: status) != nil else {
            throw ConsoleError(.badRequest, "status must be one of \(StreamStatus.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let within = try starting.map { starting throws(ConsoleError) -> Int in
            guard case .ago(let seconds)? = try? SinceArgument.parse(starting) else {
                throw ConsoleError(.badRequest, "starting must be a duration ahead (90m, 24h, 7d)")
            }
            return seconds
        }
        let streams = try await database.withConnection {
            try ConsoleReadQueries.streams(status: status, startingWithinSeconds: within, after: after, limit: limit, on: $0)
        }
        return ConsolePages.Streams(status: status, starting: starting, streams: streams, nextAfter: streams.count == limit ? streams.last?.id : nil)
    }

    // MARK: actions

    /// How many items the action would touch now (for the confirmation page and the bulk limit).
    public func count(_ action: ConsoleAction) async throws -> Int {
        switch action {
        case .cancelStream(let id):
            return try await database.withConnection { try ConsoleReadQueries.search(id, on: $0) }.filter { $0 == "stream" }.count
        case .pause(let kind): return kind == nil ? CountdownJob.Kind.allCases.count : 1
        case .resume(let kind):
            let paused = try await database.withConnection { try PauseQueries.paused(on: $0) }
            return kind.map { kind in paused.filter { $0.kind == kind }.count } ?? paused.count
        case .retryDead(let id), .dropDead(let id):
            return try await queue.jobs(ids: [id]).values.filter { if case .dead = $0.state { true } else { false } }.count
        case .retryQuarantine(let key), .dropQuarantine(let key):
            return try await store.quarantineEntries().filter { $0.key == key }.count
        case .restoreTokens(let since):
            return try await TokenInvalidationLog(database: store).restorable(since: try Self.since(since))
        }
    }

    /// What cancelling stream `id` would touch now; nil when there is no such stream.
    public func cancelCounts(_ id: String) async throws -> ConsolePages.CancelCounts? {
        guard let report = try await StreamReport.load(id, database: store, queue: queue, settings: settings, transport: transport) else {
            return nil
        }
        let preStart = Set(StreamCommands.preStartJobIDs(id))
        return ConsolePages.CancelCounts(
            status: report.status, ended: StreamStatus(rawValue: report.status)?.isTerminal ?? false,
            pendingJobs: report.jobs.filter { preStart.contains($0.id) && $0.state != "dead" }.count,
            activeReminders: report.reminders.filter { $0.status == "active" }.count, sessions: report.sessions.count,
            devices: report.devices.count)
    }

    /// Does the action; returns what happened, in a sentence.
    public func perform(_ action: ConsoleAction, actor: String, reason: String) async throws -> String {
        switch action {
        case .cancelStream(let id):
            let report = try await StreamEnding.end(id, as: .cancelled, database: database, queue: queue)
            guard report.changed else { return "stream \(id) is already \(report.status); nothing changed" }
            return "stream \(id): \(report.previousStatus) → \(report.status); \(report.jobsRemoved) pre-start job(s) removed, "
                + "\(report.remindersCancelled) reminder(s) cancelled, \(report.sessionsToEnd) session(s) to end"
        case .pause(let kind):
            try await pause(kinds: kind.map { [$0] } ?? [], reason: reason, actor: actor)
            return "paused \(kind ?? "every kind"); workers stop claiming within a second"
        case .resume(let kind):
            let resumed = try await resume(kinds: kind.map { [$0] } ?? [], actor: actor)
            return "resumed \(kind ?? "every kind") (\(resumed) paused kind(s)); workers release the held jobs within a second"
        case .retryDead(let id):
            return "\(try await queue.redrive([id])) job(s) back on the queue, due now"
        case .dropDead(let id):
            return "dropped \(try await queue.dropDeadLetters([id])) dead letter(s)"
        case .retryQuarantine(let key):
            let report = try await QuarantineActions.retry([key], database: store)
            return "\(report.requeued.count) planned again, \(report.gone.count) gone, \(report.stillFailing.count) still failing"
                + (report.stillFailing[key].map { ": \($0)" } ?? "")
        case .dropQuarantine(let key):
            return "dropped \(try await store.dropQuarantined(keys: [key])) quarantine entr(ies)"
        case .restoreTokens(let since):
            let report = try await TokenInvalidationLog(database: store).restore(since: try Self.since(since), limit: ConsoleAction.bulkLimit)
            if let over = report.overLimit {
                throw ConsoleError(.tooMany, "\(over) items, more than \(ConsoleAction.bulkLimit): refused, nothing done")
            }
            return "restored \(report.restoredTotal) token(s); \(report.skippedChanged) left alone (the device has another token or owner now, or is gone)"
        }
    }

    /// Writes an audit row; returns its id.
    @discardableResult
    public func audit(_ entry: AuditQueries.Entry) async throws -> Int {
        try await database.withConnection { try AuditQueries.record(entry, on: $0) }
    }

    /// Sets the outcome of audit row `id`.
    public func setAuditOutcome(_ outcome: String, ofRow id: Int) async throws {
        try await database.withConnection { try AuditQueries.setOutcome(outcome, ofRow: id, on: $0) }
    }

    static func since(_ text: String) throws -> SinceArgument {
        do { return try SinceArgument.parse(text) } catch {
            throw ConsoleError(.badRequest, "since must be an RFC 3339 time (2026-12-01T20:00:00Z) or a duration ago (90s, 15m, 2h)")
        }
    }
}
