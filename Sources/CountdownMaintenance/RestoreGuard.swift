import CountdownDomain
import CountdownStore
import Foundation
import Redis

/// `countdown-admin restore-guard` (SPEC 12.4), run after PostgreSQL was restored from a backup and before the workers
/// start again: every eligible (stream, user, device) whose start window overlaps `[since, now]` is recorded as sent
/// (`assumed_sent`, reason `restored`), and every active reminder due in that span as `sent`, so nothing the backup
/// forgot is sent a second time. It errs toward "no second countdown": a start that really was not sent before the
/// restore is given up, and counted in the report. Updates and ends are never held back. Then the ledger's clock and
/// the fleet's watermark are reset, which lets the workers claim again.
public struct RestoreGuard: Sendable {
    /// What the guard recorded.
    public struct Report: Sendable, Equatable, Encodable {
        /// Scheduled streams whose start window overlaps the span.
        public var streams = 0
        /// Starts recorded as sent without being sent: new ledger rows, and rows that were pending, being sent, failed or
        /// skipped in the backup (`StartLedger.assumeSent`; a row `sent` stays).
        public var startsAssumed = 0
        /// Starts by platform (`ios`, `android`).
        public var byPlatform: [String: Int] = [:]
        /// Active reminders marked sent.
        public var remindersAssumed = 0
    }

    /// Streams whose devices are read and written together.
    static let streamsPerPage = 100

    private let database: StoreClient
    private let watermark: LedgerWatermark
    private let settings: FlowSettings
    private let transport: PushTransportKind

    public init(database: StoreClient, watermark: LedgerWatermark, settings: FlowSettings, transport: PushTransportKind) {
        self.database = database
        self.watermark = watermark
        self.settings = settings
        self.transport = transport
    }

    /// Whether `since` lies in the future on the database's clock (the guard then refuses and changes nothing).
    public func isFuture(_ since: TimeCutoff) async throws -> Bool {
        try await database.withConnection { try RestoreGuardQueries.isFuture(since, on: $0) }
    }

    /// Records what may have been sent since `since`, then clears the trip.
    public func run(since: TimeCutoff) async throws -> Report {
        let lead = settings.startLeadSeconds
        let streams = try await database.withConnection { try RestoreGuardQueries.streamsInWindow(since: since, leadSeconds: lead, on: $0) }
        var report = Report(streams: streams.count)
        var page = streams[...]
        while !page.isEmpty {
            let chunk = Array(page.prefix(Self.streamsPerPage))
            page = page.dropFirst(chunk.count)
            let devices = try await database.withConnection { try RestoreGuardQueries.devices(of: chunk, on: $0) }
            let eligible = devices.filter {
                StartEligibility.skipReason(for: $0.device, transport: transport, androidCountdown: settings.androidCountdownEnabled) == nil
            }
            for (platform, devices) in Dictionary(grouping: eligible, by: \.device.platform) {
                let keys = devices.map { StartLedger.Key(stream: $0.stream, user: $0.device.userID, device: $0.device.deviceID) }
                let assumed = try await database.transaction { try StartLedger.assumeSent(keys, on: $0) }
                report.startsAssumed += assumed
                if assumed > 0 { report.byPlatform[platform, default: 0] += assumed }
            }
        }
        if settings.remindersEnabled {
            let reminderLead = settings.reminderLeadSeconds
            report.remindersAssumed = try await database.withConnection {
                try RestoreGuardQueries.markRemindersSent(since: since, leadSeconds: reminderLead, on: $0)
            }
        }
        try await database.withConnection { try RestoreGuardQueries.resetLedgerClock(on: $0) }
        try await watermark.clear()
        return report
    }

    /// `--none`: the database did not go back (or nothing was sent since): forgets the watermark and the trip, records nothing.
    public func clear() async throws {
        try await database.withConnection { try RestoreGuardQueries.resetLedgerClock(on: $0) }
        try await watermark.clear()
    }
}
