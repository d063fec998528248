import CountdownDomain

/// Runs one decoded job. Every handler re-reads PostgreSQL first, so a late, duplicated or stale job is harmless.
public struct JobHandler: Sendable {
    public let context: FlowContext

    public init(context: FlowContext) { self.context = context }

    public func handle(_ job: CountdownJob) async throws -> HandlerOutcome {
        switch job {
        case .start(let stream): try await StartFanout(context: context).run(stream: stream, scope: .stream)
        case .backfillDevice(let device): try await BackfillHandler(context: context).run(device: device)
        case .backfillUser(let user): try await BackfillHandler(context: context).run(user: user)
        case .end(let stream): try await SessionFanout(context: context).end(stream: stream)
        case .sessionEnd(let stream, let device): try await SessionFanout(context: context).end(stream: stream, device: device)
        case .update(let stream): try await SessionFanout(context: context).update(stream: stream)
        case .reminder(let stream): try await ReminderFanout(context: context).run(stream: stream)
        case .reminderPage(let stream, let after, let through): try await ReminderFanout(context: context).run(stream: stream, after: after, through: through)
        case .expire(let stream): try await ExpireHandler(context: context).run(stream: stream)
        }
    }

    /// Several T-60 start jobs at once (one fan-out over all their streams); the outcome of each stream by id.
    public func handleStarts(_ streams: [String]) async throws -> [String: HandlerOutcome] {
        try await StartFanout(context: context).run(streams: streams, scope: .stream)
    }
}
