import CountdownStore
import Foundation
import Postgres
import Testing

/// `ReminderQueries` on the schema of version 81: marking reminders `sent` rewrites each row on its own page and
/// writes no index entry (a HOT update: no index names `status`, and the table's pages keep room for the new
/// versions), calls no trigger function per row, and the fan-out's reads by status still find their rows.
@Suite struct ReminderQueriesTests {
    @Test func markingSentTouchesOnlyThePagesUsersAndTheirRowsKeepEveryIndexRead() async throws {
        try await StoreDatabase.with(prefix: "store_reminders") { client in
            try await client.seed("""
                INSERT INTO users (id, display_name) SELECT 'u' || i, 'U' FROM generate_series(1, 9) i;
                INSERT INTO streams (id, title, planned_start_at) VALUES ('s', 'S', now() + interval '1 hour'),
                                                                          ('t', 'T', now() + interval '1 hour');
                INSERT INTO stream_reminders (stream_id, user_id) SELECT 's', 'u' || i FROM generate_series(1, 9) i;
                INSERT INTO stream_reminders (stream_id, user_id) VALUES ('t', 'u1');
                UPDATE stream_reminders SET status = 'cancelled' WHERE stream_id = 's' AND user_id = 'u9';
                UPDATE stream_reminders SET updated_at = now() - interval '1 day';
                """)
            let indexes = try await client.lines("SELECT indexname FROM pg_indexes WHERE tablename = 'stream_reminders' ORDER BY indexname")
            #expect(indexes == ["stream_reminders_by_user", "stream_reminders_pkey"], "no index names the status")

            // The backend's counts not yet reported (the seed's updates too, on the same connection): the difference.
            let updates = try await client.transaction { connection -> [Int] in
                func counts() throws -> [Int] {
                    let row = try connection.query("""
                        SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables WHERE relname = 'stream_reminders'
                        """)[0]
                    return [try row.decode("n_tup_upd", as: Int.self), try row.decode("n_tup_hot_upd", as: Int.self)]
                }
                let before = try counts()
                try ReminderQueries.markSent("s", users: ["u2", "u3", "u9"], on: connection)
                return zip(try counts(), before).map { $0 - $1 }
            }
            #expect(updates == [2, 2], "both reminders marked sent in place (updated, HOT updated): \(updates)")
            let rows = try await client.lines("""
                SELECT stream_id || ' ' || user_id || ' ' || status || ' ' || (updated_at > now() - interval '1 minute')::text
                FROM stream_reminders WHERE user_id IN ('u1', 'u2', 'u3', 'u9') ORDER BY stream_id, user_id
                """)
            #expect(rows == ["s u1 active false", "s u2 sent true", "s u3 sent true", "s u9 cancelled false", "t u1 active false"],
                    "only the active reminders of the stream's users named are marked, and their updated_at moves")

            // The touch trigger runs only for writers that leave updated_at alone, and still sets it for them.
            let touch = try await client.lines("SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgname = 'stream_reminders_touch'")
            #expect(touch.count == 1 && touch[0].contains("WHEN ((NOT (new.updated_at IS DISTINCT FROM old.updated_at)))"), "\(touch)")
            try await client.seed("""
                UPDATE stream_reminders SET status = 'cancelled' WHERE stream_id = 't';
                UPDATE stream_reminders SET status = 'sent', updated_at = '2026-01-02T03:04:05Z' WHERE stream_id = 's' AND user_id = 'u8';
                """)
            let touched = try await client.lines("""
                SELECT user_id || ' ' || status || ' ' || (updated_at > now() - interval '1 minute')::text
                FROM stream_reminders WHERE stream_id = 't' OR user_id = 'u8' ORDER BY stream_id, user_id
                """)
            #expect(touched == ["u8 sent false", "u1 cancelled true"])
            try await client.seed("""
                UPDATE stream_reminders SET status = 'active', updated_at = now() - interval '1 day' WHERE stream_id = 's' AND user_id = 'u8';
                DELETE FROM countdown_outbox;
                """)

            let active = try await client.withConnection { try ReminderQueries.activeUsers("s", after: "", limit: 10, on: $0) }
            #expect(active == ["u1", "u4", "u5", "u6", "u7", "u8"])
            let following = try await client.withConnection {
                try ReminderQueries.activeUsers("s", after: "u1", through: "u4", limit: 10, includingSent: true, on: $0)
            }
            #expect(following == ["u2", "u3", "u4"], "a fan-out that follows a move reads the sent ones too")
            let ends = try await client.withConnection { try ReminderQueries.pageEnds("s", pageSize: 3, includingSent: true, on: $0) }
            #expect(ends == ["u3", "u6"])
            let counted = try await client.withConnection { try ViewerCountQuery.load(["s", "t"], on: $0) }
            #expect(counted == ["s": 8], "active and sent reminders count as viewers, cancelled ones do not")
        }
    }
}
