import Foundation
import Postgres

/// A device or user that became reachable (token registered, login, preference back on, added as a guest)
/// gets a start for every stream in its window in which it is creator or guest. Deduplicated by the ledger.
struct BackfillHandler: Sendable {
    let context: FlowContext

    func run(device: String) async throws -> HandlerOutcome {
        let streams = try await streamsInWindow(
            "JOIN devices d ON d.user_id = p.user_id WHERE d.device_id = $1", key: device)
        return try await fanOut(streams, scope: .device(device))
    }

    func run(user: String) async throws -> HandlerOutcome {
        let streams = try await streamsInWindow("WHERE p.user_id = $1", key: user)
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
            case .retry(let after, let reason): retry = .retry(after: after, reason: reason)
            }
        }
        return retry ?? .done(detail: details.joined(separator: "; "))
    }

    private func streamsInWindow(_ filter: String, key: String) async throws -> [String] {
        let lead = context.settings.startLeadSeconds
        return try await context.database.withConnection { connection in
            try connection.query("""
                SELECT DISTINCT s.id FROM stream_participants p
                JOIN streams s ON s.id = p.stream_id
                \(filter)
                  AND s.status = 'scheduled' AND s.planned_start_at > now()
                  AND s.planned_start_at - make_interval(secs => $2) <= now()
                ORDER BY s.id
                """, [key, lead]).map { try $0.decode("id", as: String.self) }
        }
    }
}
