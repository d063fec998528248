import CountdownDomain
import CountdownStore
import Postgres
import Testing

/// `StreamStateQueries.load`: what the planner knows of a stream, read with a few index probes per stream whatever the
/// size of the tables (the outbox relay runs it for every batch).
@Suite struct StreamStateQueriesTests {
    /// Streams with 3,000 active reminders, 3,000 live iOS ledger rows on another stream, Android countdowns live,
    /// ended and in flight, and an iOS session. `stream_reminders` is analyzed, as autovacuum keeps the backend's table:
    /// without statistics the planner guesses one active reminder per stream (`status = 'active'` at its default
    /// selectivity) and reads a small stream's reminders in one bitmap scan instead of up to the first active one.
    static let seed = """
        INSERT INTO users (id, display_name) SELECT 'u' || i, 'U' || i FROM generate_series(1, 3000) i;
        INSERT INTO devices (device_id, user_id, platform, push_to_start_token) SELECT 'd' || i, 'u' || i, 'ios', 'pts' || i
            FROM generate_series(1, 3000) i;
        INSERT INTO devices (device_id, user_id, platform, fcm_token) VALUES
            ('a1', 'u1', 'android', 'fcm-a1'), ('a2', 'u2', 'android', 'fcm-a2'), ('a3', 'u3', 'android', 'fcm-a3'),
            ('a4', 'u4', 'android', 'fcm-a4');
        INSERT INTO streams (id, title, planned_start_at)
            SELECT id, id, now() + interval '1 hour'
            FROM unnest(ARRAY['popular', 'quiet', 'other', 'android-live', 'android-ended', 'android-starting', 'android-stale',
                              'ios-session']) AS id;
        INSERT INTO stream_reminders (stream_id, user_id) SELECT 'popular', 'u' || i FROM generate_series(1, 3000) i;
        INSERT INTO stream_reminders (stream_id, user_id, status) VALUES ('quiet', 'u1', 'sent');
        INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status, sent_at)
            SELECT 'other', 'u' || i, 'd' || i, 'sent', now() FROM generate_series(1, 3000) i;
        INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status, sent_at, android_ended_at, claimed_until) VALUES
            ('android-live', 'u1', 'd1', 'sent', now(), NULL, NULL),
            ('android-live', 'u1', 'a1', 'sent', now(), NULL, NULL),
            ('android-ended', 'u2', 'a2', 'sent', now(), now(), NULL),
            ('android-starting', 'u3', 'a3', 'sending', NULL, NULL, now() + interval '1 minute'),
            ('android-stale', 'u4', 'a4', 'sending', NULL, NULL, now() - interval '1 minute');
        INSERT INTO live_activity_sessions (stream_id, device_id, user_id, activity_id, live_activity_token)
            VALUES ('ios-session', 'd5', 'u5', 'act-5', 'tok-5');
        DELETE FROM countdown_outbox;
        ANALYZE stream_reminders;
        """

    @Test func knowsRemindersAndSessionsOfEveryKind() async throws {
        try await StoreDatabase.with(prefix: "store_state") { client in
            try await client.seed(Self.seed)
            let states = try await client.withConnection { connection in
                try StreamStateQueries.load(["popular", "quiet", "other", "android-live", "android-ended", "android-starting",
                                           "android-stale", "ios-session", "gone"], on: connection)
            }
            #expect(Set(states.keys) == ["popular", "quiet", "other", "android-live", "android-ended", "android-starting",
                                         "android-stale", "ios-session"])
            #expect(states.filter(\.value.hasActiveReminders).keys.sorted() == ["popular"], "a sent reminder is not active")
            #expect(states.filter(\.value.hasSessions).keys.sorted() == ["android-live", "android-stale", "android-starting", "ios-session"],
                    "iOS ledger rows are no session; an ended Android countdown is none; a start left sending under an expired claim (its worker killed after FCM's answer) may be showing")
        }
    }

    /// Activities started on a broadcast channel register no session: a channel in use stands for them (the stream's
    /// end and updates are planned); one only created, or retired by the end, does not.
    /// An older activity of a device (SPEC 12.1) lives in `countdown_activity_sessions` alone once the newest one's
    /// session is deleted (`DELETE …?activityId=`): it still needs the stream's update and end.
    @Test func anOlderActivityAloneCountsAsSessions() async throws {
        try await StoreDatabase.with(prefix: "store_state_older") { client in
            try await client.seed("""
                INSERT INTO users (id, display_name) VALUES ('u', 'U');
                INSERT INTO devices (device_id, user_id, platform, push_to_start_token) VALUES ('d', 'u', 'ios', 'pts');
                INSERT INTO streams (id, title, planned_start_at) VALUES ('older', 'O', now() + interval '1 hour'),
                    ('none', 'N', now() + interval '1 hour');
                INSERT INTO countdown_activity_sessions (stream_id, device_id, activity_id, user_id, live_activity_token)
                    VALUES ('older', 'd', 'act-1', 'u', 'tok-1');
                DELETE FROM countdown_outbox;
                """)
            let states = try await client.withConnection { try StreamStateQueries.load(["older", "none"], on: $0) }
            #expect(states.filter(\.value.hasSessions).keys.sorted() == ["older"])
        }
    }

    @Test func aBroadcastChannelInUseCountsAsSessions() async throws {
        try await StoreDatabase.with(prefix: "store_state_channel") { client in
            try await client.seed("""
                INSERT INTO streams (id, title, planned_start_at, status)
                    SELECT id, id, now() + interval '1 hour', 'cancelled' FROM unnest(ARRAY['in-use', 'created', 'ended']) AS id;
                INSERT INTO countdown_broadcast_channels (stream_id, state, channel_id) VALUES
                    ('in-use', 'in_use', 'ch-1'), ('created', 'created', 'ch-2'), ('ended', 'deleting', 'ch-3');
                DELETE FROM countdown_outbox;
                """)
            let (states, candidates) = try await client.withConnection { connection in
                (try StreamStateQueries.load(["in-use", "created", "ended"], on: connection),
                 try ReconcileQueries.page(after: "", limit: 10, expireAfter: 3600, on: connection))
            }
            #expect(states.filter(\.value.hasSessions).keys.sorted() == ["in-use"])
            #expect(candidates == ["in-use"], "an ended stream whose channel is still in use is reconciled (its end planned)")
        }
    }

    /// The regression of the Android countdown: `has_reminders` and the Android `EXISTS` were planned as hashed
    /// subqueries that read every active reminder and every live ledger row (each joined with its device) for each
    /// batch. Counted with the transaction's table and index statistics: rows and index entries read.
    @Test func readsOnlyItsOwnStreamsRows() async throws {
        try await StoreDatabase.with(prefix: "store_state_cost") { client in
            try await client.seed(Self.seed)
            let read = try await client.transaction { connection -> [String: Int] in
                // The relay's steady state: a prepared statement's generic plan.
                try connection.execute("SET LOCAL plan_cache_mode = force_generic_plan")
                for _ in 0..<3 {
                    _ = try StreamStateQueries.load(["popular", "quiet", "android-live", "android-ended", "android-starting", "ios-session"],
                                                  on: connection)
                }
                let rows = try connection.query("""
                    SELECT t.relname AS name,
                           (coalesce(t.seq_tup_read, 0) + coalesce((SELECT sum(pg_stat_get_xact_tuples_returned(i.indexrelid))
                                                                    FROM pg_index i WHERE i.indrelid = t.relid), 0))::bigint AS n
                    FROM pg_stat_xact_user_tables t
                    WHERE t.relname IN ('stream_reminders', 'countdown_start_ledger', 'devices')
                    """)
                var read: [String: Int] = [:]
                for row in rows { read[try row.decode("name", as: String.self)] = try row.decode("n", as: Int.self) }
                return read
            }
            for table in ["stream_reminders", "countdown_start_ledger", "devices"] {
                #expect((read[table] ?? 0) <= 3 * 12, "\(table): \(read[table] ?? 0) rows or index entries read for 3 loads of 6 streams")
            }
        }
    }

    /// The relay asks whether a stream has active reminders only while its reminder is not done for its planned start
    /// (all the planner asks): a popular stream's reminders, marked sent by its fan-out, are read through the primary
    /// key up to the first active one, and would be read for every batch the relay plans for the stream. The
    /// reconciler, which looks for reminders left active after the fan-out, still finds them.
    @Test func theRelayReadsNoRemindersOfAStreamWhoseReminderIsDone() async throws {
        try await StoreDatabase.with(prefix: "store_state_done") { client in
            try await client.seed(Self.seed)
            try await client.seed("""
                INSERT INTO countdown_stream_progress (stream_id, reminder_done_for) SELECT id, planned_start_at FROM streams WHERE id = 'popular'
                ON CONFLICT (stream_id) DO UPDATE SET reminder_done_for = EXCLUDED.reminder_done_for;
                UPDATE stream_reminders SET status = 'sent' WHERE stream_id = 'popular' AND user_id <> 'u999';
                INSERT INTO stream_reminders (stream_id, user_id) VALUES ('other', 'u1');
                DELETE FROM countdown_outbox;
                """)
            // Rows and index entries read, counted before and after (the backend's counts not yet reported include the
            // seed's update, on the same connection).
            let (read, states) = try await client.transaction { connection -> (Int, [String: StreamState]) in
                func reminderReads() throws -> Int {
                    try connection.query("""
                        SELECT (coalesce(t.seq_tup_read, 0) + coalesce((SELECT sum(pg_stat_get_xact_tuples_returned(i.indexrelid))
                                                                       FROM pg_index i WHERE i.indrelid = t.relid), 0))::bigint AS n
                        FROM pg_stat_xact_user_tables t WHERE t.relname = 'stream_reminders'
                        """)[0].decode("n", as: Int.self)
                }
                try connection.execute("SET LOCAL plan_cache_mode = force_generic_plan")
                let before = try reminderReads()
                var states: [String: StreamState] = [:]
                for _ in 0..<3 { states = try StreamStateQueries.load(["popular", "other"], remindersWhenDone: false, on: connection) }
                return (try reminderReads() - before, states)
            }
            #expect(read <= 3 * 2, "\(read) reminders read for 3 loads of 2 streams")
            #expect(states["popular"]?.hasActiveReminders == false, "its reminder is done: the planner does not ask")
            #expect(states["other"]?.hasActiveReminders == true, "a stream whose reminder is not done still has its answer")
            let reconciled = try await client.withConnection { try StreamStateQueries.load(["popular"], on: $0) }
            #expect(reconciled["popular"]?.hasActiveReminders == true, "the reconciler still finds the reminder left active")
        }
    }
}
