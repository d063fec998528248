import CountdownDomain
import CountdownStore
import Foundation
import Postgres
import PushPayloads
import Testing

/// Streams as the payload builders see them: the creator's name, the guests' in position order, each participant's
/// role, the status and PostgreSQL's `now()`; a stream that is gone is left out, one that cannot be read is
/// reported on its own.
@Suite struct StreamSnapshotQueriesTests {
    static let rows = """
        INSERT INTO users (id, display_name) VALUES ('c', 'Cara'), ('g1', 'Gus'), ('g2', 'Gia'), ('g3', 'Hal');
        INSERT INTO streams (id, title, planned_start_at, status) VALUES
            ('s', 'Title', '2030-01-02T03:04:05.25Z', 'scheduled'), ('lonely', 'Nobody', '2030-01-02T03:04:05Z', 'cancelled');
        INSERT INTO stream_participants (stream_id, user_id, role, position) VALUES
            ('s', 'g1', 'guest', 2), ('s', 'g3', 'guest', 1), ('s', 'c', 'creator', 5), ('s', 'g2', 'guest', 1);
        """

    @Test func loadsTheCreatorTheGuestsByPositionAndTheRoles() async throws {
        try await StoreDatabase.with(prefix: "store_snapshot") { client in
            try await client.seed(Self.rows)
            let (row, now) = try await client.transaction { connection in
                (try StreamSnapshotQueries.load("s", on: connection), try connection.query("SELECT now() AS now")[0].decode("now", as: Date.self))
            }
            let loaded = try #require(row)
            #expect(loaded.snapshot == StreamSnapshot(id: "s", title: "Title", plannedStartAt: Date(timeIntervalSince1970: 1_893_553_445.25),
                                                      creatorName: "Cara", guestNames: ["Gia", "Hal", "Gus"]))
            #expect(loaded.status == .scheduled)
            #expect(loaded.roles == ["c": .creator, "g1": .guest, "g2": .guest, "g3": .guest])
            #expect(loaded.now == now, "the database's clock, read in the same transaction")
            #expect(loaded.viewerCount == 0, "filled only where payloads are built")
        }
    }

    @Test func streamsThatAreGoneAreLeftOut() async throws {
        try await StoreDatabase.with(prefix: "store_snapshot_gone") { client in
            try await client.seed(Self.rows)
            let (many, one, none) = try await client.withConnection { connection in
                (try StreamSnapshotQueries.loadReadable(["s", "gone", "lonely"], on: connection).rows, try StreamSnapshotQueries.load("gone", on: connection),
                 try StreamSnapshotQueries.loadReadable([], on: connection).rows)
            }
            #expect(Set(many.keys) == ["s", "lonely"])
            #expect(one == nil && none.isEmpty)
            let lonely = try #require(many["lonely"])
            #expect(lonely.snapshot.creatorName == "" && lonely.snapshot.guestNames.isEmpty && lonely.roles.isEmpty)
            #expect(lonely.status == .cancelled)
        }
    }

    @Test func anUnreadableStreamIsReportedWithoutFailingTheOthers() async throws {
        try await StoreDatabase.with(prefix: "store_snapshot_unreadable") { client in
            try await client.seed(Self.rows + """
                ALTER TABLE streams DROP CONSTRAINT streams_planned_start_sane;
                INSERT INTO streams (id, title, planned_start_at) VALUES ('bad', 'Bad', 'infinity');
                """)
            let loaded = try await client.withConnection { connection in
                let loaded = try StreamSnapshotQueries.loadReadable(["s", "bad"], on: connection)
                return (Set(loaded.rows.keys), Set(loaded.unreadable.keys))
            }
            #expect(loaded.0 == ["s"] && loaded.1 == ["bad"])
            await #expect {
                _ = try await client.withConnection { try StreamSnapshotQueries.load("bad", on: $0) }
            } throws: { error in
                (error as? StoreError)?.code == .rowData && (error as? StoreError)?.context.hasPrefix("read stream bad: ") == true
            }
        }
    }

    /// A crowd of `guests` guests behind a creator, their names `name(i)` (guest i at position i).
    static func crowd(_ guests: Int, name: String) -> String {
        """
        INSERT INTO users (id, display_name) VALUES ('boss', 'Boss');
        INSERT INTO users (id, display_name) SELECT 'fan' || i, \(name) FROM generate_series(1, \(guests)) i;
        INSERT INTO streams (id, title, planned_start_at, status) VALUES ('big', 'Big', '2030-01-02T03:04:05Z', 'cancelled');
        INSERT INTO stream_participants (stream_id, user_id, role, position) VALUES ('big', 'boss', 'creator', 0);
        INSERT INTO stream_participants (stream_id, user_id, role, position) SELECT 'big', 'fan' || i, 'guest', i FROM generate_series(1, \(guests)) i;
        """
    }

    /// The end of a stream with thousands of guests reads only its first participants: enough names for every payload.
    @Test func loadLeadingReadsTheFirstParticipantsOnly() async throws {
        try await StoreDatabase.with(prefix: "store_snapshot_leading") { client in
            try await client.seed(Self.crowd(5_000, name: "'Fan ' || i"))
            let (leading, all, roles) = try await client.withConnection { connection in
                (try StreamSnapshotQueries.loadLeading("big", on: connection), try StreamSnapshotQueries.load("big", on: connection),
                 try StreamSnapshotQueries.roles(of: "big", users: ["fan4999", "boss", "nobody"], on: connection))
            }
            let first = try #require(leading)
            let every = try #require(all)
            let read = 2 * PushPayloadBuilder.decidingNameCount - 1
            #expect(first.snapshot.creatorName == "Boss" && first.snapshot.guestNames == Array(every.snapshot.guestNames.prefix(read)))
            #expect(every.snapshot.guestNames.count == 5_000 && first.roles.count == read + 1 && first.roles["fan4999"] == nil)
            #expect(first.status == .cancelled && first.snapshot.plannedStartAt == every.snapshot.plannedStartAt)
            #expect(roles == ["fan4999": .guest, "boss": .creator])
            let builder = try PushPayloadBuilder()
            #expect(try builder.end(first.snapshot, reason: .cancelled, role: nil, language: .tr, now: first.now)
                    == builder.end(every.snapshot, reason: .cancelled, role: nil, language: .tr, now: first.now))
            #expect(try await client.withConnection { try StreamSnapshotQueries.loadLeading("gone", on: $0) } == nil)
        }
    }

    /// Blank names among the first do not count: too few left to decide, it reads every participant.
    @Test func loadLeadingReadsEveryoneWhenTheFirstNamesAreBlank() async throws {
        try await StoreDatabase.with(prefix: "store_snapshot_blank") { client in
            try await client.seed(Self.crowd(3_000, name: "CASE WHEN i < 2000 THEN ' ' ELSE 'Fan ' || i END"))
            let leading = try await client.withConnection { try StreamSnapshotQueries.loadLeading("big", on: $0) }
            #expect(leading?.snapshot.guestNames.count == 3_000)
        }
    }
}
