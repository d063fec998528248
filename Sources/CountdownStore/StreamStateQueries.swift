import Foundation
import CountdownDomain
import Postgres

/// Loads `StreamState`s for the planner, and PostgreSQL's clock.
public enum StreamStateQueries {
    /// The states of the streams `ids` (those that exist).
    ///
    /// `remindersWhenDone` false: `hasActiveReminders` is read only for a stream whose reminder is not done for its
    /// planned start (false otherwise), which is all the planner asks of it (`JobPlanner.planStream`). A stream's
    /// active reminders are its reminders in user order (the primary key) up to the first active one: once its
    /// fan-out marked them sent, every one of them (a million for the largest stream), read for every batch the relay
    /// plans for it. The reconciler, which looks for reminders left active after a fan-out, asks always.
    public static func load(_ ids: [String], remindersWhenDone: Bool = true, on connection: PostgresConnection) throws -> [String: StreamState] {
        guard !ids.isEmpty else { return [:] }
        // Each flag is the first row of an index range of its stream (`ORDER BY` the index's next column, `LIMIT 1`):
        // an `IN` or `EXISTS` may be planned as a hashed subquery that reads every active reminder of the streams
        // (100,000 for a popular one) or every live row of the start ledger joined with its device, for every
        // batch the relay plans. Activities started on a broadcast channel register no session: a channel in use
        // counts as sessions, or a stream whose every activity is on its channel would get no end and no update.
        let rows = try connection.query("""
            SELECT s.id, s.status, s.planned_start_at, p.start_done_for, p.reminder_done_for, p.update_pending_for,
                   CASE WHEN $2 OR p.reminder_done_for IS DISTINCT FROM s.planned_start_at
                        THEN coalesce((SELECT true FROM stream_reminders r WHERE r.stream_id = s.id AND r.status = 'active'
                                       ORDER BY r.user_id LIMIT 1), false)
                        ELSE false END AS has_reminders,
                   coalesce((SELECT true FROM live_activity_sessions l WHERE l.stream_id = s.id ORDER BY l.device_id LIMIT 1)
                            OR (SELECT true FROM countdown_activity_sessions a WHERE a.stream_id = s.id
                                ORDER BY a.device_id, a.activity_id LIMIT 1)
                            OR \(AndroidCountdownQueries.liveCondition)
                            OR \(BroadcastChannels.inUseCondition), false) AS has_sessions
            FROM streams s LEFT JOIN countdown_stream_progress p ON p.stream_id = s.id
            WHERE s.id = ANY($1::text[])
            """, [PostgresTextArray(ids), remindersWhenDone])
        var states: [String: StreamState] = [:]
        for row in rows {
            let id: String = try row.decode("id")
            states[id] = StreamState(
                id: id, status: StreamStatus(rawValue: try row.decode("status")) ?? .scheduled,
                plannedStartAt: try row.decode("planned_start_at"), startDoneFor: try row.decode("start_done_for"),
                reminderDoneFor: try row.decode("reminder_done_for"), hasActiveReminders: try row.decode("has_reminders"),
                hasSessions: try row.decode("has_sessions"), updatePendingFor: try row.decode("update_pending_for"))
        }
        return states
    }

    public static func now(on connection: PostgresConnection) throws -> Date {
        try connection.query("SELECT now() AS now").first?.decode("now", as: Date.self) ?? Date()
    }

    /// Serialises planners working on the same streams (relays, reconciler) until the transaction ends, so a
    /// stale plan can never overwrite a newer one in the queue. Locks are taken in id order (no deadlocks).
    public static func lockStreams(_ ids: [String], on connection: PostgresConnection) throws {
        guard !ids.isEmpty else { return }
        _ = try connection.query("""
            SELECT pg_advisory_xact_lock(hashtextextended('countdown.stream:' || id, 0))
            FROM (SELECT DISTINCT unnest($1::text[]) AS id ORDER BY 1) AS ids
            """, [PostgresTextArray(ids)])
    }

    /// `lockStreams` without waiting: false (and possibly some taken, released with the transaction) when another
    /// transaction holds one of them.
    public static func tryLockStreams(_ ids: [String], on connection: PostgresConnection) throws -> Bool {
        guard !ids.isEmpty else { return true }
        return try connection.query("""
            SELECT bool_and(pg_try_advisory_xact_lock(hashtextextended('countdown.stream:' || id, 0))) AS locked
            FROM (SELECT DISTINCT unnest($1::text[]) AS id ORDER BY 1) AS ids
            """, [PostgresTextArray(ids)]).first?.decode("locked", as: Bool?.self) ?? true
    }
}
