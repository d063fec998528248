import Foundation
import Postgres
import PushPayloads

/// Sends the reminder notification to every user with an `active` reminder for a still-scheduled stream, on
/// each of their devices with an FCM token, in chunks; a user's reminder becomes `sent` once their devices
/// took it. Users with `live_stream` off or without a device are skipped and counted.
struct ReminderFanout: Sendable {
    let context: FlowContext
    static let chunkSize = 2000

    private struct Recipient: Sendable {
        var user: String
        var device: String?
        var fcmToken: String?
        var locale: String?
        var userLocale: String?
        var enabled: Bool
    }

    /// Pages through the active reminders; the next page is read while the current one is being sent.
    func run(stream streamID: String) async throws -> HandlerOutcome {
        let settings = context.settings
        var page = try await fetch(streamID, after: "")
        guard let first = page.stream else { return .skipped(reason: "stream_missing") }
        if let decision = first.windowDecision(leadSeconds: settings.reminderLeadSeconds, notYet: "reminder time is later") { return decision }
        let planned = first.snapshot.plannedStartAt
        guard settings.remindersEnabled else { return try await ReminderFanout.recordDone(streamID, planned: planned, context: context) }
        var sentUsers = 0
        var retryAfter: Duration?
        var needsRetry = false
        while let current = page.stream, let last = page.users.last {
            async let next = fetch(streamID, after: last)
            let outcome = try await send(page.recipients, stream: current)
            sentUsers += outcome.sentUsers
            if outcome.needsRetry {
                needsRetry = true
                if let wait = outcome.retryAfter { retryAfter = max(retryAfter ?? .zero, wait) }
            }
            page = try await next
        }
        if page.stream == nil { return .skipped(reason: "stream_missing") }
        if needsRetry { return .retry(after: retryAfter, reason: "push_retry") }
        try await Self.markDone(streamID, planned: planned, context: context)
        return .done(detail: "reminded \(sentUsers) users")
    }

    /// The stream (nil when it is gone), the next page of users with an active reminder after `cursor` (the next
    /// cursor), and their devices as recipients.
    private func fetch(_ streamID: String, after cursor: String) async throws
        -> (stream: StreamSnapshotRow?, users: [String], recipients: [Recipient]) {
        try await context.database.withConnection { connection in
            guard let loaded = try StreamSnapshotQuery.load(streamID, on: connection) else { return (nil, [], []) }
            // The page of users first (an index range scan), then their devices and preferences by key: joined
            // in one statement, the planner hashes every user and device for each page.
            let users = try connection.query("""
                SELECT user_id FROM stream_reminders
                WHERE stream_id = $1 AND status = 'active' AND user_id > $2
                ORDER BY user_id LIMIT $3
                """, [streamID, cursor, Self.chunkSize]).map { try $0.decode("user_id", as: String.self) }
            guard !users.isEmpty else { return (loaded, [], []) }
            let rows = try connection.query("""
                SELECT r.user_id, d.device_id, d.fcm_token, d.locale AS locale, u.locale AS user_locale,
                       coalesce(np.enabled, true) AS enabled
                FROM unnest($1::text[]) AS r(user_id)
                JOIN users u ON u.id = r.user_id
                LEFT JOIN devices d ON d.user_id = r.user_id AND coalesce(d.fcm_token, '') <> ''
                LEFT JOIN notification_preferences np ON np.user_id = r.user_id AND np.category = 'live_stream'
                ORDER BY r.user_id
                """, [PostgresTextArray(users)])
            return (loaded, users, try rows.map { row in
                Recipient(user: try row.decode("user_id"), device: try row.decode("device_id"), fcmToken: try row.decode("fcm_token"),
                          locale: try row.decode("locale"), userLocale: try row.decode("user_locale"), enabled: try row.decode("enabled"))
            })
        }
    }

    /// Sends one chunk; returns how many users are now `sent` and whether (and after when) to retry the rest.
    private func send(_ recipients: [Recipient], stream: StreamSnapshotRow) async throws
        -> (sentUsers: Int, needsRetry: Bool, retryAfter: Duration?) {
        var pushes: [OutgoingPush] = []
        var addressed: [Recipient] = []
        var users = Set<String>()
        for recipient in recipients {
            users.insert(recipient.user)
            guard recipient.enabled else {
                context.metrics.skip(kind: "reminder", reason: "preference_off")
                continue
            }
            guard let fcm = recipient.fcmToken, !fcm.isEmpty else {
                context.metrics.skip(kind: "reminder", reason: "no_device")
                continue
            }
            let language = PayloadLanguage.resolve(deviceLocale: recipient.locale, userLocale: recipient.userLocale)
            guard let notification = try? context.payloads.reminder(stream.snapshot, language: language, now: stream.now) else { continue }
            pushes.append(.notification(notification, fcmToken: fcm))
            addressed.append(recipient)
        }
        let deliveries = await context.push.sendAll(pushes, kind: .reminder)
        var pendingUsers = Set<String>()
        var delivered = Set<String>()
        var refused: [TokenHygiene.Invalidation] = []
        var needsRetry = false
        var retryAfter: Duration?
        for (recipient, delivery) in zip(addressed, deliveries) {
            switch delivery {
            case .accepted:
                delivered.insert(recipient.user)
            case .tokenRefused(_, let reason):
                // A notification names only the FCM token.
                refused.append(TokenHygiene.Invalidation(device: recipient.device ?? "", token: .fcm, value: recipient.fcmToken ?? "",
                                                         reason: reason, stream: stream.snapshot.id))
            case .rejected:
                break
            case .retry(let after, _):
                pendingUsers.insert(recipient.user)
                needsRetry = true
                if let after { retryAfter = max(retryAfter ?? .zero, after) }
            case .configurationError:
                pendingUsers.insert(recipient.user)
                needsRetry = true
                retryAfter = .seconds(60)
            }
        }
        let sent = delivered.subtracting(pendingUsers)
        let streamID = stream.snapshot.id
        let refusedTokens = refused
        try await context.database.withConnection { connection in
            try TokenHygiene.clear(refusedTokens, on: connection)
            try connection.execute("""
                UPDATE stream_reminders r SET status = 'sent'
                FROM unnest($2::text[]) AS t(user_id)
                WHERE r.stream_id = $1 AND r.user_id = t.user_id AND r.status = 'active'
                """, [streamID, PostgresTextArray(Array(sent))])
        }
        return (sent.count, needsRetry, retryAfter)
    }
}
