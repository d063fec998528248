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

    private typealias Recipient = ReminderQueries.Recipient

    /// The reminder job: more than one page of active reminders is split into page jobs that any worker runs
    /// (the fan-out is marked done once they are queued; the reconciler re-queues the job while reminders stay
    /// active, should a page be lost); a single page is sent here.
    func run(stream streamID: String) async throws -> HandlerOutcome {
        let pageSize = Self.chunkSize
        guard let (stream, activeEnds) = try await context.reminders.reminderPages(streamID, pageSize: pageSize, includingSent: false) else {
            return .skipped(reason: "stream_missing")
        }
        if let decision = stream.windowDecision(leadSeconds: context.settings.reminderLeadSeconds, notYet: "reminder time is later") {
            return decision
        }
        let planned = stream.snapshot.plannedStartAt
        guard context.settings.remindersEnabled else { return try await Self.recordDone(streamID, planned: planned, context: context) }
        var ends = activeEnds
        if try await Self.followsMove(streamID, planned: planned, context: context) {
            ends = try await context.reminders.reminderPages(streamID, pageSize: pageSize, includingSent: true)?.ends ?? []
        }
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
        let owner = context.liveness.workerID
        let deadOwners = try await context.claimOwners { try await context.reminders.reminderClaimOwners(streamID, except: owner) }.dead
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
            let outcome: ChunkOutcome
            do {
                outcome = try await send(page.recipients, stream: current, deadOwners: deadOwners)
            } catch {
                try? await written
                throw error
            }
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
        try await context.reminders.reminderChunk(streamID, after: cursor, through: through, limit: Self.chunkSize)
    }

    /// What one chunk's pushes came to: the users whose every device took the reminder, the tokens FCM refused,
    /// the device records still to write (accepted devices whose record could not be written as their answer
    /// arrived), the claim to let go, and whether (and after when) to retry the rest.
    private struct ChunkOutcome: Sendable {
        var sent: [String]
        var refused: [DeviceTokenQueries.Invalidation]
        var devicesSent: [String] = []
        /// The chunk's claim, released when its outcome is written.
        var claim: Int64?
        var needsRetry: Bool
        var retryAfter: Duration?
    }

    /// Marks a chunk's users `sent`, writes its remaining device records, clears its refused tokens and releases its
    /// claim, in one transaction.
    private func write(_ outcome: ChunkOutcome?, stream streamID: String) async throws {
        guard let outcome, !(outcome.sent.isEmpty && outcome.refused.isEmpty && outcome.devicesSent.isEmpty && outcome.claim == nil)
        else { return }
        try await context.reminders.settleReminders(streamID, users: outcome.sent, refused: outcome.refused, claim: outcome.claim,
                                                    sent: outcome.devicesSent)
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

    /// Sends one chunk: claims its range of users (nothing when another live sender holds part of it), skips the
    /// devices the reminder reached before, sends to the others, and records each answered batch's accepted devices
    /// as its answers arrive (one row) before the batch's slots take their next pushes, so a crash repeats at most
    /// one push per slot (SPEC 10.1, 12.1).
    private func send(_ recipients: [Recipient], stream: StreamSnapshotRow, deadOwners: [String]) async throws -> ChunkOutcome {
        var candidates: [(recipient: Recipient, device: String, push: OutgoingPush)] = []
        // One notification per language for the chunk: it depends only on the stream, the language and `now`.
        var built: [PayloadLanguage: Result<ReminderNotification, any Error>] = [:]
        for recipient in recipients {
            guard recipient.enabled else {
                context.metrics.skip(kind: "reminder", reason: "preference_off")
                continue
            }
            guard let fcm = recipient.fcmToken, !fcm.isEmpty, let device = recipient.device else {
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
            candidates.append((recipient, device, .notification(notification, fcmToken: fcm)))
        }
        let streamID = stream.snapshot.id
        let owner = context.liveness.workerID
        let seconds = context.claimSeconds
        let wanted = candidates.map { (device: $0.device, user: $0.recipient.user) }
        let claim = try await context.reminders.claimReminders(streamID, planned: stream.snapshot.plannedStartAt,
                                                               leadSeconds: context.settings.reminderLeadSeconds, devices: wanted,
                                                               seconds: seconds, owner: owner, deadOwners: deadOwners)
        var pendingUsers = Set<String>()
        var delivered = Set<String>()
        var addressed: [(recipient: Recipient, device: String, push: OutgoingPush)] = []
        for candidate in candidates {
            if claim.claimed.contains(candidate.device) {
                addressed.append(candidate)
            } else if claim.sent.contains(candidate.device) {
                context.metrics.skip(kind: "reminder", reason: "duplicate")
                delivered.insert(candidate.recipient.user)
            } else {
                // Another live sender holds the device: its user stays active until that sender settles it.
                pendingUsers.insert(candidate.recipient.user)
            }
        }
        var outcome = ChunkOutcome(sent: [], refused: [], claim: claim.id, needsRetry: !pendingUsers.isEmpty, retryAfter: nil)
        await context.push.sendEach(addressed.map(\.push), kind: .reminder, keepingSlots: true, window: context.push.batchesOut) {
            start, deliveries, slots in
            // The batch's slots go back once its accepted devices are recorded (or the write failed).
            defer { slots.releaseAll() }
            var accepted: [String] = []
            for (candidate, delivery) in zip(addressed[start..<start + deliveries.count], deliveries) {
                switch delivery {
                case .accepted:
                    delivered.insert(candidate.recipient.user)
                    accepted.append(candidate.device)
                case .tokenRefused(_, let reason):
                    // A notification names only the FCM token.
                    outcome.refused.append(DeviceTokenQueries.Invalidation(device: candidate.device, token: .fcm, value: candidate.recipient.fcmToken ?? "",
                                                                         reason: reason, stream: streamID))
                case .rejected:
                    break
                case .retry(let after, _):
                    pendingUsers.insert(candidate.recipient.user)
                    outcome.needsRetry = true
                    if let after { outcome.retryAfter = max(outcome.retryAfter ?? .zero, after) }
                case .configurationError:
                    pendingUsers.insert(candidate.recipient.user)
                    outcome.needsRetry = true
                    outcome.retryAfter = .seconds(60)
                }
            }
            // Recorded as the answers arrive: what a crash can repeat is what is out, not the whole chunk.
            guard !accepted.isEmpty, let claimID = claim.id else { return }
            let batch = accepted
            do {
                try await context.reminders.remindersDelivered(streamID, claim: claimID, sent: batch)
            } catch {
                // Written with the chunk's outcome instead; until then a crash would repeat these too.
                context.logger.warn("reminder deliveries could not be recorded as they arrived", ["stream": .string(streamID), "error": .error(error)])
                outcome.devicesSent.append(contentsOf: batch)
            }
        }
        outcome.sent = Array(delivered.subtracting(pendingUsers))
        return outcome
    }
}
