import CountdownDomain
import CountdownStore
import Foundation
import PushPayloads

/// Sends the reminder notification to every user with an `active` reminder for a still-scheduled stream, on
/// each of their devices with an FCM token, in chunks; a user's reminder becomes `sent` once their devices
/// took it. Users with `live_stream` off or without a device are skipped and counted.
struct ReminderFanout: Sendable {
    let context: FlowContext
    static let chunkSize = 2000

    private typealias Recipient = ReminderStore.Recipient

    /// The reminder job: more than one page of active reminders is split into page jobs that any worker runs
    /// (the fan-out is marked done once they are queued; the reconciler re-queues the job while reminders stay
    /// active, should a page be lost); a single page is sent here.
    func run(stream streamID: String) async throws -> HandlerOutcome {
        let pageSize = Self.chunkSize
        let loaded = try await context.database.withConnection { connection -> (StreamSnapshotRow, [String])? in
            guard let stream = try StreamSnapshotStore.load(streamID, on: connection) else { return nil }
            return (stream, try ReminderStore.pageEnds(streamID, pageSize: pageSize, on: connection))
        }
        guard let (stream, ends) = loaded else { return .skipped(reason: "stream_missing") }
        if let decision = stream.windowDecision(leadSeconds: context.settings.reminderLeadSeconds, notYet: "reminder time is later") {
            return decision
        }
        let planned = stream.snapshot.plannedStartAt
        guard context.settings.remindersEnabled else { return try await Self.recordDone(streamID, planned: planned, context: context) }
        guard ends.isEmpty else {
            let pages = zip([""] + ends, ends.map(Optional.some) + [nil]).map { CountdownJob.reminderPage(stream: streamID, after: $0, through: $1) }
            try await Self.markDone(streamID, planned: planned, context: context)
            return .fanOut(jobs: pages, detail: "\(pages.count) pages of up to \(pageSize) users")
        }
        let outcome = try await page(streamID, after: "", through: nil)
        if case .done = outcome { try await Self.markDone(streamID, planned: planned, context: context) }
        return outcome
    }

    /// One page job: the users after `after` through `through`.
    func run(stream streamID: String, after: String, through: String?) async throws -> HandlerOutcome {
        try await page(streamID, after: after, through: through)
    }

    /// Sends to the active reminders of a page in chunks; the next chunk is read while the current one is sent.
    private func page(_ streamID: String, after start: String, through: String?) async throws -> HandlerOutcome {
        var page = try await fetch(streamID, after: start, through: through)
        guard let first = page.stream else { return .skipped(reason: "stream_missing") }
        if let decision = first.windowDecision(leadSeconds: context.settings.reminderLeadSeconds, notYet: "reminder time is later") {
            return decision
        }
        var sentUsers = 0
        var retryAfter: Duration?
        var needsRetry = false
        // Each chunk's outcome is written while the next chunk is sent (a chunk's users are after the last one
        // fetched, whatever the write): one PostgreSQL round of about a tenth of a second per chunk is hidden.
        var unwritten: ChunkOutcome?
        var tooLate = false
        while let current = page.stream, let last = page.users.last {
            // The planned start came during the fan-out (by PostgreSQL's clock, read with each chunk): a reminder
            // is never sent from then on (SPEC 10.2); this chunk's devices are counted and the rest stay unsent.
            if current.now >= current.snapshot.plannedStartAt {
                for _ in page.recipients { context.metrics.skip(kind: "reminder", reason: "too_late") }
                tooLate = true
                break
            }
            async let next = fetch(streamID, after: last, through: through)
            let previous = unwritten
            async let written: Void = write(previous, stream: streamID)
            let outcome = await send(page.recipients, stream: current)
            do {
                try await written
                page = try await next
            } catch {
                // The chunk just sent is written before the page fails; an earlier chunk whose write failed is
                // sent again by the retry.
                try? await write(outcome, stream: streamID)
                throw error
            }
            unwritten = outcome
            sentUsers += outcome.sent.count
            if outcome.needsRetry {
                needsRetry = true
                if let wait = outcome.retryAfter { retryAfter = max(retryAfter ?? .zero, wait) }
            }
        }
        try await write(unwritten, stream: streamID)
        if page.stream == nil { return .skipped(reason: "stream_missing") }
        if tooLate { return .skipped(reason: "too_late") }
        if needsRetry { return .retry(after: retryAfter, reason: "push_retry") }
        return .done(detail: "reminded \(sentUsers) users")
    }

    /// The stream (nil when it is gone), the next page of users with an active reminder after `cursor` (the next
    /// cursor), and their devices as recipients.
    private func fetch(_ streamID: String, after cursor: String, through: String?) async throws
        -> (stream: StreamSnapshotRow?, users: [String], recipients: [Recipient]) {
        try await context.database.withConnection { connection in
            guard let loaded = try StreamSnapshotStore.load(streamID, on: connection) else { return (nil, [], []) }
            // The page of users first (an index range scan), then their devices and preferences by key: joined
            // in one statement, the planner hashes every user and device for each page.
            let users = try ReminderStore.activeUsers(streamID, after: cursor, through: through, limit: Self.chunkSize, on: connection)
            return (loaded, users, try ReminderStore.recipients(users, on: connection))
        }
    }

    /// What one chunk's pushes came to: the users whose every device took the reminder, the tokens FCM refused,
    /// and whether (and after when) to retry the rest.
    private struct ChunkOutcome: Sendable {
        var sent: [String]
        var refused: [DeviceTokenStore.Invalidation]
        var needsRetry: Bool
        var retryAfter: Duration?
    }

    /// Marks a chunk's users `sent` and clears its refused tokens, in one transaction.
    private func write(_ outcome: ChunkOutcome?, stream streamID: String) async throws {
        guard let outcome, !(outcome.sent.isEmpty && outcome.refused.isEmpty) else { return }
        try await context.database.transaction(serializationRetries: 2) { connection in
            try DeviceTokenStore.clear(outcome.refused, on: connection)
            try ReminderStore.markSent(streamID, users: outcome.sent, on: connection)
        }
    }

    /// The reminder for one language, or the error that it could not be built (logged once here; its users stay
    /// active, so the reconciler's next run tries them again and this line repeats).
    private func builtNotification(for stream: StreamSnapshotRow, language: PayloadLanguage) -> Result<ReminderNotification, any Error> {
        let result = Result { try context.payloads.reminder(stream.snapshot, language: language, now: stream.now) }
        if case .failure(let error) = result {
            context.logger.error("reminder payload could not be built", [
                "stream": .string(stream.snapshot.id), "language": .string(language.rawValue), "error": .error(error),
            ])
        }
        return result
    }

    /// Sends one chunk.
    private func send(_ recipients: [Recipient], stream: StreamSnapshotRow) async -> ChunkOutcome {
        var pushes: [OutgoingPush] = []
        var addressed: [Recipient] = []
        var users = Set<String>()
        // One notification per language for the chunk: it depends only on the stream, the language and `now`.
        var built: [PayloadLanguage: Result<ReminderNotification, any Error>] = [:]
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
            let result = built[language] ?? builtNotification(for: stream, language: language)
            built[language] = result
            guard case .success(let notification) = result else {
                context.metrics.skip(kind: "reminder", reason: "payload_error")
                continue
            }
            pushes.append(.notification(notification, fcmToken: fcm))
            addressed.append(recipient)
        }
        let deliveries = await context.push.sendAll(pushes, kind: .reminder)
        var pendingUsers = Set<String>()
        var delivered = Set<String>()
        var refused: [DeviceTokenStore.Invalidation] = []
        var needsRetry = false
        var retryAfter: Duration?
        for (recipient, delivery) in zip(addressed, deliveries) {
            switch delivery {
            case .accepted:
                delivered.insert(recipient.user)
            case .tokenRefused(_, let reason):
                // A notification names only the FCM token.
                refused.append(DeviceTokenStore.Invalidation(device: recipient.device ?? "", token: .fcm, value: recipient.fcmToken ?? "",
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
        return ChunkOutcome(sent: Array(delivered.subtracting(pendingUsers)), refused: refused, needsRetry: needsRetry, retryAfter: retryAfter)
    }
}
