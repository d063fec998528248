import CountdownMaintenance
import CountdownStore
import Foundation

/// The data of each page: the HTML renders it, `Accept: application/json` gets it as one object (docs/console.md).
public enum ConsolePages {
    /// `/`: the fleet at a glance.
    public struct Fleet: Sendable, Codable {
        /// Queue and PostgreSQL counts as `countdown-admin stats` computes them.
        public var stats: SystemStats
        public var quarantined: Int
        public var paused: [ConsolePause]
        /// nil when the console has no view of the workers (no Redis probe).
        public var workers: [WorkerHeartbeat]?
        public var tokenGuard: TokenGuardState?
    }

    /// One line of a stream's, device's or user's story.
    public struct TimelineEntry: Sendable, Codable, Equatable {
        public var at: Date?
        public var event: String
        public var deviceID: String?
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
        public var plannedStartHistory: [ConsoleReadStore.PlannedStartChange]
        public var invalidations: [ConsoleReadStore.Invalidation]
        public var timeline: [TimelineEntry]
    }

    /// `/devices/{id}`.
    public struct Device: Sendable, Codable {
        public var device: ConsoleReadStore.Device
        public var startDecisions: [ConsoleReadStore.StartDecision]
        public var sessions: [ConsoleReadStore.Session]
        public var invalidations: [ConsoleReadStore.Invalidation]
    }

    /// `/users/{id}`.
    public struct User: Sendable, Codable {
        public var user: ConsoleReadStore.User
        public var devices: [ConsoleReadStore.Device]
        public var streams: [ConsoleReadStore.Participation]
        public var reminders: [ConsoleReadStore.Reminder]
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
    public struct Quarantine: Sendable, Codable { public var entries: [QuarantineStore.Entry] }
    /// `/tokens`.
    public struct Tokens: Sendable, Codable { public var since: String; public var invalidations: [TokenInvalidationLog.Entry] }
    /// `/audit`.
    public struct Audit: Sendable, Codable { public var entries: [AuditStore.Entry]; public var nextBefore: Int? }
    /// `/search?q=`: what the id names.
    public struct Search: Sendable, Codable { public var query: String; public var matches: [String: String] }
}

extension ConsolePages.Device {
    /// The page with every token masked.
    func masked() -> ConsolePages.Device {
        var page = self
        page.device = page.device.masked()
        page.sessions = sessions.map { var session = $0; session.token = TokenMask.mask(session.token); return session }
        page.invalidations = invalidations.map { $0.masked() }
        return page
    }
}

extension ConsoleReadStore.Device {
    func masked() -> ConsoleReadStore.Device {
        var device = self
        device.fcmToken = TokenMask.mask(fcmToken)
        device.pushToStartToken = TokenMask.mask(pushToStartToken)
        return device
    }
}

extension ConsoleReadStore.Invalidation {
    func masked() -> ConsoleReadStore.Invalidation {
        var entry = self
        entry.value = TokenMask.mask(value)
        return entry
    }
}
