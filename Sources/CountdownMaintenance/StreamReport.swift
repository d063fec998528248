import CountdownDomain
import DelayQueue
import Foundation
import Postgres
import Telemetry

/// Everything about one stream an operator needs, for `countdown-admin show`.
public struct StreamReport: Sendable, Codable {
    public struct Participant: Sendable, Codable { public var userID, name, role: String; public var position: Int }
    public struct Device: Sendable, Codable {
        public var userID, deviceID, platform: String
        /// `eligible` or why not (for a start push now).
        public var startEligibility: String
    }
    public struct Job: Sendable, Codable {
        public var id, state: String
        public var at: Date?
        public var attempts: Int
        public var lastError: String
    }
    public struct LedgerEntry: Sendable, Codable {
        public var userID, deviceID, status: String
        public var reason: String?
        public var attempts: Int
        public var sentAt: Date?
        /// When the row last changed (the decision's time for a skip or failure).
        public var updatedAt: Date?
        /// The device's platform now (nil when the device is gone).
        public var platform: String?
        /// An Android device's countdown (SPEC 10.4), nil for other platforms.
        public var android: AndroidCountdown?
    }
    /// What the fleet sent an Android device for the stream after its start: the last `seq`, and the end.
    public struct AndroidCountdown: Sendable, Codable {
        /// The `seq` of the last message (1: the start only).
        public var seq: Int
        public var endedAt: Date?
        /// The end's reason (`ready`…`expired`, `takeover`, `dead_token:…`, `undeliverable`).
        public var endedReason: String?
    }
    public struct Session: Sendable, Codable { public var deviceID: String; public var userID: String?; public var token: String; public var updatedAt: Date }
    public struct Reminder: Sendable, Codable { public var userID, status: String }

    public var id, title, status: String
    public var plannedStartAt: Date
    public var startWindowOpensAt: Date
    public var databaseNow: Date
    public var participants: [Participant]
    public var devices: [Device]
    public var jobs: [Job]
    public var ledger: [LedgerEntry]
    public var sessions: [Session]
    public var reminders: [Reminder]
    /// End pushes being retried, and those given up on when the dismissal window closed.
    public var endDelivery: [EndDelivery] = []

    /// `nil` when the stream does not exist.
    public static func load(_ streamID: String, database: PostgresClient, queue: any DelayQueue, settings: FlowSettings,
                            transport: PushTransportKind) async throws -> StreamReport? {
        let lead = settings.startLeadSeconds
        let partial: StreamReport? = try await database.withConnection { connection in
            guard let stream = try connection.query(
                "SELECT id, title, status, planned_start_at, now() AS now FROM streams WHERE id = $1", [streamID]).first else { return nil }
            let participants = try connection.query("""
                SELECT p.user_id, u.display_name, p.role, p.position FROM stream_participants p JOIN users u ON u.id = p.user_id
                WHERE p.stream_id = $1 ORDER BY (p.role <> 'creator'), p.position, p.user_id
                """, [streamID]).map {
                Participant(userID: try $0.decode("user_id"), name: try $0.decode("display_name"), role: try $0.decode("role"), position: try $0.decode("position"))
            }
            let devices = try connection.query("""
                SELECT p.user_id, p.role, d.device_id, d.platform, d.fcm_token, d.push_to_start_token,
                       d.locale AS locale, coalesce(np.enabled, true) AS enabled
                FROM stream_participants p JOIN users u ON u.id = p.user_id JOIN devices d ON d.user_id = p.user_id
                LEFT JOIN notification_preferences np ON np.user_id = p.user_id AND np.category = 'live_stream'
                WHERE p.stream_id = $1 ORDER BY p.user_id, d.device_id
                """, [streamID]).map { row in
                let candidate = DeviceCandidate(
                    userID: try row.decode("user_id"), role: try row.decode("role"), deviceID: try row.decode("device_id"),
                    platform: try row.decode("platform"), fcmToken: try row.decode("fcm_token"), pushToStartToken: try row.decode("push_to_start_token"),
                    locale: try row.decode("locale"), liveStreamEnabled: try row.decode("enabled"))
                let skip = StartEligibility.skipReason(for: candidate, transport: transport, androidCountdown: settings.androidCountdownEnabled)
                return Device(userID: candidate.userID, deviceID: candidate.deviceID, platform: candidate.platform,
                              startEligibility: skip?.rawValue ?? "eligible")
            }
            let ledger = try connection.query("""
                SELECT l.user_id, l.device_id, l.status, l.reason, l.attempts, l.sent_at, l.updated_at, d.platform,
                       greatest(l.android_seq, 1) AS android_seq, l.android_ended_at, l.android_end_reason
                FROM countdown_start_ledger l LEFT JOIN devices d ON d.device_id = l.device_id
                WHERE l.stream_id = $1 ORDER BY l.user_id, l.device_id
                """, [streamID]).map { row in
                let platform: String? = try row.decode("platform")
                let status: String = try row.decode("status")
                let android = platform == "android" && status == "sent" ? AndroidCountdown(
                    seq: try row.decode("android_seq"), endedAt: try row.decode("android_ended_at"),
                    endedReason: try row.decode("android_end_reason")) : nil
                return LedgerEntry(userID: try row.decode("user_id"), deviceID: try row.decode("device_id"), status: status,
                                   reason: try row.decode("reason"), attempts: try row.decode("attempts"), sentAt: try row.decode("sent_at"),
                                   updatedAt: try row.decode("updated_at"), platform: platform, android: android)
            }
            let sessions = try connection.query("""
                SELECT device_id, user_id, live_activity_token, updated_at FROM live_activity_sessions WHERE stream_id = $1 ORDER BY device_id
                """, [streamID]).map {
                Session(deviceID: try $0.decode("device_id"), userID: try $0.decode("user_id"),
                        token: Redact.token(try $0.decode("live_activity_token", as: String.self)), updatedAt: try $0.decode("updated_at"))
            }
            let reminders = try connection.query(
                "SELECT user_id, status FROM stream_reminders WHERE stream_id = $1 ORDER BY user_id", [streamID]).map {
                Reminder(userID: try $0.decode("user_id"), status: try $0.decode("status"))
            }
            let planned: Date = try stream.decode("planned_start_at")
            return StreamReport(
                id: try stream.decode("id"), title: try stream.decode("title"), status: try stream.decode("status"), plannedStartAt: planned,
                startWindowOpensAt: planned.addingTimeInterval(-Double(lead)), databaseNow: try stream.decode("now"),
                participants: participants, devices: devices, jobs: [], ledger: ledger, sessions: sessions, reminders: reminders)
        }
        guard var report = partial else { return nil }
        report.endDelivery = try await Self.endDelivery(streamID, database: database)
        var ids = [CountdownJob.Kind.start, .reminder, .expire, .update, .end].map { CountdownJob.streamJobID($0, stream: streamID) }
        ids += report.sessions.map { CountdownJob.sessionEnd(stream: streamID, device: $0.deviceID).id }
        let infos = try await queue.jobs(ids: ids)
        report.jobs = ids.compactMap { id in
            guard let info = infos[id] else { return nil }
            switch info.state {
            case .waiting(let due): return Job(id: id, state: "waiting", at: due, attempts: info.attempts, lastError: info.lastError)
            case .leased(let until): return Job(id: id, state: "running", at: until, attempts: info.attempts, lastError: info.lastError)
            case .dead(let since): return Job(id: id, state: "dead", at: since, attempts: info.attempts, lastError: info.lastError)
            }
        }
        return report
    }
}
