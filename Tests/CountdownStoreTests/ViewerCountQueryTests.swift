import CountdownDomain
import CountdownStore
import Postgres
import Testing

/// `viewerCount`: a stream's participants and the users with a reminder not cancelled (sent ones too), each person
/// once.
@Suite struct ViewerCountQueryTests {
    @Test func countsEachWaitingPersonOnce() async throws {
        try await StoreDatabase.with(prefix: "store_viewers") { client in
            try await client.seed("""
                INSERT INTO users (id, display_name) VALUES ('c', 'C'), ('g', 'G'), ('r1', 'R1'), ('r2', 'R2'), ('r3', 'R3');
                INSERT INTO streams (id, title, planned_start_at) VALUES
                    ('a', 'A', now() + interval '1 hour'), ('b', 'B', now() + interval '1 hour'), ('empty', 'E', now() + interval '1 hour');
                INSERT INTO stream_participants (stream_id, user_id, role) VALUES ('a', 'c', 'creator'), ('a', 'g', 'guest');
                INSERT INTO stream_reminders (stream_id, user_id, status) VALUES
                    ('a', 'g', 'active'), ('a', 'r1', 'active'), ('a', 'r2', 'sent'), ('a', 'r3', 'cancelled'), ('b', 'r1', 'active');
                """)
            let (counts, none, filled) = try await client.withConnection { connection in
                var rows = try StreamSnapshotQueries.loadReadable(["a", "empty"], on: connection).rows
                rows["empty"]?.viewerCount = 99
                try ViewerCountQuery.fill(&rows, on: connection)
                return (try ViewerCountQuery.load(["a", "b", "empty", "gone"], on: connection), try ViewerCountQuery.load([], on: connection),
                        rows.mapValues(\.viewerCount))
            }
            #expect(counts == ["a": 4, "b": 1], "a: c, g (also a reminder), r1, r2 (sent); not r3 (cancelled)")
            #expect(none.isEmpty)
            #expect(filled == ["a": 4, "empty": 0], "a stream nobody waits for counts 0")
        }
    }
}
