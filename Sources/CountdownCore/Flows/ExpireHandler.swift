import Foundation
import Postgres

/// Turns a stream still `scheduled` long after its planned start into `expired` (which ends its activities
/// through the same trigger path as any other status change).
struct ExpireHandler: Sendable {
    let context: FlowContext

    func run(stream streamID: String) async throws -> HandlerOutcome {
        let expireAfter = context.settings.expireAfterSeconds
        return try await context.database.withConnection { connection in
            let updated = try connection.execute("""
                UPDATE streams SET status = 'expired'
                WHERE id = $1 AND status = 'scheduled' AND planned_start_at + make_interval(secs => $2) <= now() + make_interval(secs => $3)
                """, [streamID, expireAfter, FlowContext.earlyTolerance])
            if updated == 1 { return .done(detail: "stream expired") }
            let rows = try connection.query(
                "SELECT status, planned_start_at + make_interval(secs => $2) AS expires_at, now() AS now FROM streams WHERE id = $1",
                [streamID, expireAfter])
            guard let row = rows.first else { return .skipped(reason: "stream_missing") }
            let status: String = try row.decode("status")
            guard status == StreamStatus.scheduled.rawValue else { return .skipped(reason: "stream_\(status)") }
            return .reschedule(to: try row.decode("expires_at"), now: try row.decode("now"), reason: "expires later")
        }
    }
}
