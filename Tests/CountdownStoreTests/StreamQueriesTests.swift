import CountdownStore
import Foundation
import Postgres
import Testing

/// `streams` outside snapshots: expiry, the no-wait key-share lock of a fan-out, the streams of a member in their
/// start window, and which of a set are still scheduled.
@Suite struct StreamQueriesTests {
    @Test func expiresOnlyAScheduledStreamPastItsExpiry() async throws {
        try await StoreDatabase.with(prefix: "store_stream_expire") { client in
            try await client.seed("""
                INSERT INTO streams (id, title, planned_start_at, status) VALUES
                    ('due', 'due', now() - interval '2 hours', 'scheduled'),
                    ('almost', 'due in a minute', now() - interval '3540 seconds', 'scheduled'),
                    ('later', 'later', now() + interval '1 hour', 'scheduled'),
                    ('started', 'started', now() - interval '2 hours', 'started');
                """)
            func expire(_ id: String, tolerance: Double = 0) async throws -> StreamQueries.Expiry {
                try await client.withConnection { try StreamQueries.expire(id, expireAfter: 3600, tolerance: tolerance, on: $0) }
            }
            #expect(try await expire("due") == .expired)
            #expect(try await expire("due") == .notScheduled(status: "expired"), "a repeated job changes nothing")
            guard case .later(let expiresAt, let now) = try await expire("almost") else { Issue.record("expected later"); return }
            #expect((0...60).contains(expiresAt.timeIntervalSince(now)))
            #expect(try await expire("almost", tolerance: 120) == .expired, "within the tolerance early")
            guard case .later(let laterAt, let laterNow) = try await expire("later") else { Issue.record("expected later"); return }
            #expect((7100...7200).contains(laterAt.timeIntervalSince(laterNow)))
            #expect(try await expire("started") == .notScheduled(status: "started"))
            #expect(try await expire("gone") == .missing)
            #expect(try await client.lines("SELECT id || ' ' || status FROM streams ORDER BY id")
                    == ["almost expired", "due expired", "later scheduled", "started started"])
        }
    }

    @Test func lockUnheldSkipsStreamsAnotherWriterHolds() async throws {
        try await StoreDatabase.with(prefix: "store_stream_lock") { client in
            try await client.seed("INSERT INTO streams (id, title, planned_start_at) SELECT x, x, now() FROM unnest('{a,b,c}'::text[]) AS x")
            let configuration = client.configuration
            let (locked, none, updateRefused, titleChanged) = try await client.transaction { writer in
                _ = try writer.query("SELECT id FROM streams WHERE id = 'b' FOR UPDATE")
                let fanout = try PostgresConnection(configuration: configuration)
                defer { fanout.close() }
                return try fanout.transaction { fanout in
                    let locked = try StreamQueries.lockUnheld(["c", "b", "a", "missing"], on: fanout)
                    let none = try StreamQueries.lockUnheld([], on: fanout)
                    let probe = try PostgresConnection(configuration: configuration)
                    defer { probe.close() }
                    // The key-share lock stops a writer that would delete the stream, not one that changes its title.
                    let updateRefused = (try? probe.query("SELECT id FROM streams WHERE id = 'a' FOR UPDATE NOWAIT")) == nil
                    let titleChanged = try probe.query("SELECT id FROM streams WHERE id = 'c' FOR NO KEY UPDATE NOWAIT").count == 1
                    return (locked, none, updateRefused, titleChanged)
                }
            }
            #expect(locked == ["a", "c"])
            #expect(none.isEmpty)
            #expect(updateRefused, "the streams returned are locked")
            #expect(titleChanged)
        }
    }

    @Test func streamsInTheStartWindowOfAMember() async throws {
        try await StoreDatabase.with(prefix: "store_stream_window") { client in
            try await client.seed("""
                INSERT INTO users (id, display_name) VALUES ('u', 'U'), ('other', 'O');
                INSERT INTO devices (device_id, user_id, platform) VALUES ('phone', 'u', 'ios'), ('stranger', 'other', 'ios'), ('orphan', NULL, 'ios');
                INSERT INTO streams (id, title, planned_start_at, status) VALUES
                    ('in-as-guest', 'x', now() + interval '30 minutes', 'scheduled'),
                    ('in-as-creator', 'x', now() + interval '50 minutes', 'scheduled'),
                    ('too-far', 'x', now() + interval '2 hours', 'scheduled'),
                    ('passed', 'x', now() - interval '1 minute', 'scheduled'),
                    ('cancelled', 'x', now() + interval '30 minutes', 'cancelled'),
                    ('not-a-member', 'x', now() + interval '30 minutes', 'scheduled');
                INSERT INTO stream_participants (stream_id, user_id, role) VALUES
                    ('in-as-guest', 'u', 'guest'), ('in-as-creator', 'u', 'creator'), ('too-far', 'u', 'guest'), ('passed', 'u', 'guest'),
                    ('cancelled', 'u', 'guest'), ('not-a-member', 'other', 'creator');
                """)
            let found = try await client.withConnection { connection in
                try [StreamQueries.Member.user("u"), .device("phone"), .device("stranger"), .device("orphan"), .user("nobody")].map {
                    try StreamQueries.streamsInStartWindow(of: $0, lead: 3600, on: connection)
                }
            }
            #expect(found == [["in-as-creator", "in-as-guest"], ["in-as-creator", "in-as-guest"], ["not-a-member"], [], []])
            let scheduled = try await client.withConnection {
                try StreamQueries.scheduled(["in-as-guest", "passed", "cancelled", "gone"], on: $0)
            }
            #expect(scheduled == ["in-as-guest", "passed"])
        }
    }
}
