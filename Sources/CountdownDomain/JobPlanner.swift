import Foundation

/// Turns the current state of PostgreSQL into the queue operations it implies. Pure: the outbox relay,
/// the reconciler and the handlers all plan with it, so they can never disagree about which jobs exist.
public struct JobPlanner: Sendable {
    public let settings: FlowSettings

    public init(settings: FlowSettings) { self.settings = settings }

    /// When the start fan-out is due: `max(now, planned − START_LEAD)`.
    public func startDue(_ planned: Date, now: Date) -> Date {
        max(now, planned.addingTimeInterval(-Double(settings.startLeadSeconds)))
    }

    public func reminderDue(_ planned: Date, now: Date) -> Date {
        max(now, planned.addingTimeInterval(-Double(settings.reminderLeadSeconds)))
    }

    /// Whether a stream's reminder, sent for the planned start `doneFor`, is sent again for `planned`: the stream
    /// moved more than `REMINDER_LEAD_SECONDS` later since (SPEC 12.2).
    public func reminderFollows(_ doneFor: Date?, to planned: Date) -> Bool {
        guard let doneFor else { return false }
        return planned.timeIntervalSince(doneFor) > Double(settings.reminderLeadSeconds)
    }

    public func expireDue(_ planned: Date) -> Date {
        planned.addingTimeInterval(Double(settings.expireAfterSeconds))
    }

    /// Whether `now` lies in the stream's start window `[planned − START_LEAD, planned)`.
    public func inStartWindow(_ planned: Date, now: Date) -> Bool {
        now < planned && now >= planned.addingTimeInterval(-Double(settings.startLeadSeconds))
    }

    /// Every job a stream needs now. `rescheduled` adds an update push for activities already running.
    public func planStream(_ stream: StreamState, now: Date, rescheduled: Bool = false) -> [QueueOperation] {
        let id = stream.id
        guard stream.status == .scheduled else {
            var operations: [QueueOperation] = [
                .cancel(jobID: CountdownJob.start(stream: id).id),
                .cancel(jobID: CountdownJob.reminder(stream: id).id),
                .cancel(jobID: CountdownJob.expire(stream: id).id),
                .cancel(jobID: CountdownJob.update(stream: id).id),
            ]
            if stream.hasSessions { operations.append(.enqueue(.end(stream: id), dueAt: now)) }
            return operations
        }
        var operations: [QueueOperation] = []
        let planned = stream.plannedStartAt
        if now < planned && stream.startDoneFor != planned {
            operations.append(.enqueue(.start(stream: id), dueAt: startDue(planned, now: now)))
        }
        if settings.remindersEnabled && now < planned
            && ((stream.reminderDoneFor != planned && stream.hasActiveReminders) || reminderFollows(stream.reminderDoneFor, to: planned)) {
            operations.append(.enqueue(.reminder(stream: id), dueAt: reminderDue(planned, now: now)))
        }
        operations.append(.enqueue(.expire(stream: id), dueAt: max(now, expireDue(planned))))
        if rescheduled && stream.hasSessions {
            operations.append(.enqueue(.update(stream: id), dueAt: now))
        }
        return operations
    }

    /// A participant was added: a guest added inside the window gets a backfill.
    public func planParticipant(stream: StreamState, user: String, now: Date) -> [QueueOperation] {
        guard stream.status == .scheduled, inStartWindow(stream.plannedStartAt, now: now) else { return [] }
        return [.enqueue(.backfillUser(user: user), dueAt: now)]
    }

    /// A device registered, changed a token or logged in.
    public func planDevice(_ device: String, now: Date) -> [QueueOperation] {
        [.enqueue(.backfillDevice(device: device), dueAt: now)]
    }

    /// A user turned `live_stream` back on.
    public func planUser(_ user: String, now: Date) -> [QueueOperation] {
        [.enqueue(.backfillUser(user: user), dueAt: now)]
    }

    /// A runtime session was registered: if the stream already ended, it gets its end push at once; if it is still
    /// scheduled, the stream's update job runs at once, which sends the current state to every session that does not
    /// show it (a session registered after a reschedule; SPEC 10.1) and nothing to the others.
    public func planSession(stream: StreamState, device: String, now: Date) -> [QueueOperation] {
        if stream.status.isTerminal { return [.enqueue(.sessionEnd(stream: stream.id, device: device), dueAt: now)] }
        guard stream.status == .scheduled, now < stream.plannedStartAt.addingTimeInterval(Double(settings.expireAfterSeconds)) else { return [] }
        return [.enqueue(.update(stream: stream.id), dueAt: now)]
    }

    /// A takeover retired a session of the device: its end push goes out at once, whatever the stream's state.
    public func planRetired(stream: String, device: String, now: Date) -> [QueueOperation] {
        [.enqueue(.sessionEnd(stream: stream, device: device), dueAt: now)]
    }

    /// A reminder was created: sent at its time, or at once when created after its time but before the start.
    public func planReminder(stream: StreamState, now: Date) -> [QueueOperation] {
        guard settings.remindersEnabled, stream.status == .scheduled, now < stream.plannedStartAt else { return [] }
        return [.enqueue(.reminder(stream: stream.id), dueAt: reminderDue(stream.plannedStartAt, now: now))]
    }
}
