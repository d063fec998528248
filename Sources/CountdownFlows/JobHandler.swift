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
        case .end(let stream):
            // The stream's runtime sessions and its Android countdowns (SPEC 10.4): a retry of either retries both
            // (what was accepted is not sent again).
            // With a broadcast channel, the end goes on it first (one request for every subscribed activity).
            try await Self.merged(retired: onChannel { try await $0.end(stream: stream) },
                                  live: Self.merged(retired: AndroidCountdownFanout(context: context).end(stream: stream),
                                                    live: SessionFanout(context: context).end(stream: stream)))
        case .sessionEnd(let stream, let device):
            // The device's sessions retired by a takeover, then its live session if the stream has ended.
            try await Self.merged(retired: SessionFanout(context: context).endRetired(stream: stream, device: device),
                                  live: SessionFanout(context: context).end(stream: stream, device: device))
        case .update(let stream):
            try await Self.merged(retired: onChannel { try await $0.update(stream: stream) },
                                  live: Self.merged(retired: AndroidCountdownFanout(context: context).update(stream: stream),
                                                    live: SessionFanout(context: context).update(stream: stream)))
        case .reminder(let stream): try await ReminderFanout(context: context).run(stream: stream)
        case .reminderPage(let stream, let after, let through): try await ReminderFanout(context: context).run(stream: stream, after: after, through: through)
        case .expire(let stream): try await ExpireHandler(context: context).run(stream: stream)
        }
    }

    /// Several T-60 start jobs at once (one fan-out over all their streams); the outcome of each stream by id.
    public func handleStarts(_ streams: [String]) async throws -> [String: HandlerOutcome] {
        try await StartFanout(context: context).run(streams: streams, scope: .stream)
    }

    /// The broadcast part of an update or end (`APNS_BROADCAST=on`); nil when broadcast is off or the stream has no channel.
    private func onChannel(_ body: (ChannelBroadcast) async throws -> HandlerOutcome?) async throws -> HandlerOutcome? {
        guard let setup = context.broadcast else { return nil }
        return try await body(ChannelBroadcast(context: context, setup: setup))
    }

    /// One outcome for a job's two parts (a session-end job's retired and live sessions; an end or update job's
    /// Android countdowns and runtime sessions): a retry of either retries the job (both parts are idempotent);
    /// otherwise the first part's result stands unless the second did something too. Two retries on their own
    /// schedules stay one (the attempt given back); with a counted retry, the attempt is spent.
    static func merged(retired: HandlerOutcome?, live: HandlerOutcome) -> HandlerOutcome {
        guard let retired else { return live }
        switch (retired, live) {
        case (.retryOnSchedule(let first, let reason), .retryOnSchedule(let second, _)):
            return .retryOnSchedule(after: max(first, second), reason: reason)
        case (.retry(let first, let reason), .retry(let second, _)):
            guard let first, let second else { return .retry(after: first ?? second, reason: reason) }
            return .retry(after: max(first, second), reason: reason)
        case (.retry(let first, let reason), .retryOnSchedule(let second, _)), (.retryOnSchedule(let second, _), .retry(let first, let reason)):
            return .retry(after: first.map { max($0, second) } ?? second, reason: reason)
        case (.retry, _), (.retryOnSchedule, _): return retired
        case (_, .retry), (_, .retryOnSchedule), (_, .reschedule): return live
        case (.done(let first), .done(let second)): return .done(detail: first + "; " + second)
        default: return retired
        }
    }
}
