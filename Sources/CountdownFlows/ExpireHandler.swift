import CountdownDomain
import CountdownStore
import Foundation

/// Turns a stream still `scheduled` long after its planned start into `expired` (which ends its activities
/// through the same trigger path as any other status change).
struct ExpireHandler: Sendable {
    let context: FlowContext

    func run(stream streamID: String) async throws -> HandlerOutcome {
        switch try await context.streams.expire(streamID, expireAfter: context.settings.expireAfterSeconds, tolerance: FlowSettings.earlyTolerance) {
        case .expired: return .done(detail: "stream expired")
        case .missing: return .skipped(reason: "stream_missing")
        case .notScheduled(let status): return .skipped(reason: "stream_\(status)")
        case .later(let expiresAt, let now): return .reschedule(to: expiresAt, now: now, reason: "expires later")
        }
    }
}
