import CountdownMaintenance
import CountdownStore
import Foundation
import Telemetry

/// The data of each page: the HTML renders it, `Accept: application/json` gets it as one object (docs/console.md).
public enum ConsolePages {
    /// `/`: the fleet at a glance.
    public struct Fleet: Sendable, Codable {
        /// Queue and PostgreSQL counts as `countdown-admin stats` computes them.
        public var stats: SystemStats
        public var quarantined: Int
        /// The paused kinds: who paused them (`countdown-console (<user>)` or `countdown-admin (<login>)`), why, since when.
        public var paused: [PauseQueries.Entry]
        /// nil when the console has no view of the workers (no Redis probe).
        public var workers: [WorkerHeartbeat]?
        public var tokenGuard: TokenGuardState?
        /// While the fleet holds starts, backfills and reminders after the database went back in time: why.
        public var restoreGuard: String?
        /// When the figures were read.
        public var asOf: Date = Date()
        /// Healthy, degraded or paused, and why (`FleetVerdict.of` fills it).
        public var verdict: FleetVerdict?
        /// The last hour per minute.
        public var charts: FleetCharts?
    }

    /// The fleet page's charts: the last hour per minute.
    public struct FleetCharts: Sendable, Codable {
        /// Pushes by kind, platform and result (PostgreSQL).
        public var pushes: [FleetChartQueries.Count]
        /// The longest wait of a start push (PostgreSQL).
        public var startLateness: [FleetChartQueries.Lateness]
        /// Jobs that became dead letters (the queue's dead letters, newest 1,000).
        public var deadLetters: [DeadPerMinute]
    }

    public struct DeadPerMinute: Sendable, Codable, Equatable {
        public var minute: Date
        public var count: Int
    }

    /// One line of a stream's, device's or user's story.
    public struct TimelineEntry: Sendable, Codable, Equatable {
        public var at: Date?
        public var event: String
        public var deviceID: String? = nil
        public var userID: String? = nil
        /// Who did it, for an operator action.
        public var actor: String? = nil
        /// `accepted`, `refused`, `pending`, `skipped`, `unreachable`, or an action's outcome (`done`, `refused`, …).
        public var state: String? = nil
        public var detail: String
    }

    /// What cancelling a stream would touch now (its confirmation page).
    public struct CancelCounts: Sendable, Codable, Equatable {
        public var status: String
        /// Already cancelled or ended: a cancel changes nothing.
        public var ended: Bool
        /// Start, reminder, expire and update jobs queued: removed.
        public var pendingJobs: Int
        /// Active reminders: cancelled.
        public var activeReminders: Int
        /// Live Activity sessions: each gets an end push.
        public var sessions: Int
        /// Devices of the creator and guests.
        public var devices: Int
    }

    /// `/streams/{id}`.
    public struct Stream: Sendable, Codable {
        /// `countdown-admin show`'s report (tokens masked there).
        public var report: StreamReport
        public var plannedStartHistory: [ConsoleReadQueries.PlannedStartChange]
        public var invalidations: [ConsoleReadQueries.Invalidation]
        /// Devices whose start went out and whose token was cleared since: device id → when it was cleared.
        public var unreachable: [String: Date]
        public var timeline: [TimelineEntry]
        /// The stream's broadcast channels (`APNS_BROADCAST=on`), newest first; nil or empty: none.
        public var channels: [BroadcastChannel]? = nil
    }

    /// `/devices/{id}`.
    public struct Device: Sendable, Codable {
        public var device: ConsoleReadQueries.Device
        public var startDecisions: [ConsoleReadQueries.StartDecision]
        public var sessions: [ConsoleReadQueries.Session]
        public var invalidations: [ConsoleReadQueries.Invalidation]
    }

    /// `/users/{id}`.
    public struct User: Sendable, Codable {
        public var user: ConsoleReadQueries.User
        public var devices: [ConsoleReadQueries.Device]
        public var streams: [ConsoleReadQueries.Participation]
        public var reminders: [ConsoleReadQueries.Reminder]
    }

    /// A dead letter.
    public struct DeadLetter: Sendable, Codable, Equatable {
        public var id: String
        public var kind: String?
        public var attempts: Int
        public var lastError: String
        public var deadAt: Date
    }

    /// `/dead`.
    public struct Dead: Sendable, Codable { public var deadLetters: [DeadLetter]; public var limit: Int }
    /// `/quarantine`.
    public struct Quarantine: Sendable, Codable { public var entries: [QuarantineQueries.Entry] }
    /// `/tokens`.
    public struct Tokens: Sendable, Codable { public var since: String; public var invalidations: [TokenInvalidationLog.Entry] }
    /// `/audit`.
    public struct Audit: Sendable, Codable { public var entries: [AuditQueries.Entry]; public var nextBefore: Int? }
    /// `/search?q=`: what the id names.
    public struct Search: Sendable, Codable {
        public var query: String
        /// The things whose whole id is the query: kind → page.
        public var matches: [String: String]
        /// Everything found (whole ids, id prefixes, titles, names), with its page.
        public var results: [SearchResult]
    }

    /// One thing a search found, with its page.
    public struct SearchResult: Sendable, Codable, Equatable {
        public var kind: String
        public var id: String
        public var label: String
        public var how: String
        public var path: String
    }

    /// `/streams?status=scheduled&starting=24h`: streams by planned start, a page at a time.
    public struct Streams: Sendable, Codable {
        public var status: String
        /// The window ahead (`24h`), when given.
        public var starting: String?
        public var streams: [ConsoleReadQueries.StreamListing]
        /// The `after` of the next page, when this one is full.
        public var nextAfter: String?
    }
}

extension ConsolePages.Device {
    /// The page with every token masked.
    func masked() -> ConsolePages.Device {
        var page = self
        page.device = page.device.masked()
        page.sessions = sessions.map { var session = $0; session.token = Redact.token(session.token); return session }
        page.invalidations = invalidations.map { $0.masked() }
        return page
    }
}

extension ConsoleReadQueries.Device {
    func masked() -> ConsoleReadQueries.Device {
        var device = self
        device.fcmToken = fcmToken.map(Redact.token)
        device.pushToStartToken = pushToStartToken.map(Redact.token)
        return device
    }
}

extension ConsoleReadQueries.Invalidation {
    func masked() -> ConsoleReadQueries.Invalidation {
        var entry = self
        entry.value = Redact.token(value)
        return entry
    }
}
