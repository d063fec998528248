import CountdownDomain
import CountdownStore
import Foundation

/// A device or user that became reachable (token registered, login, preference back on, added as a guest)
/// gets a start for every stream in its window in which it is creator or guest. Deduplicated by the ledger.
struct BackfillHandler: Sendable {
    let context: FlowContext

    /// Also brings the device's Android countdowns up to date (a takeover ends the previous user's, a new
    /// `fcm_token` gets the current state).
    func run(device: String) async throws -> HandlerOutcome {
        let android = try await AndroidCountdownFanout(context: context).deviceChanged(device)
        let streams = try await streamsInWindow(of: .device(device))
        return JobHandler.merged(retired: android, live: try await fanOut(streams, scope: .device(device)))
    }

    func run(user: String) async throws -> HandlerOutcome {
        let streams = try await streamsInWindow(of: .user(user))
        return try await fanOut(streams, scope: .user(user))
    }

    private func fanOut(_ streams: [String], scope: FanoutScope) async throws -> HandlerOutcome {
        if streams.isEmpty { return .skipped(reason: "no_stream_in_window") }
        let outcomes = try await StartFanout(context: context).run(streams: streams, scope: scope)
        var details: [String] = []
        var retry: HandlerOutcome?
        for stream in streams {
            switch outcomes[stream] ?? .skipped(reason: "stream_missing") {
            case .done(let detail): details.append("\(stream): \(detail)")
            case .skipped(let reason): details.append("\(stream): skipped (\(reason))")
            case .reschedule: details.append("\(stream): not in window")
            case .fanOut(_, let detail): details.append("\(stream): \(detail)")
            case .retry(let after, let reason): retry = .retry(after: after, reason: reason)
            case .retryOnSchedule(let after, let reason): retry = retry ?? .retryOnSchedule(after: after, reason: reason)
            }
        }
        return retry ?? .done(detail: details.joined(separator: "; "))
    }

    private func streamsInWindow(of member: StreamQueries.Member) async throws -> [String] {
        try await context.streams.streamsInStartWindow(of: member, lead: context.settings.startLeadSeconds)
    }
}
