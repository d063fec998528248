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
                (try StreamSnapshotQueries.load(["s", "gone", "lonely"], on: connection), try StreamSnapshotQueries.load("gone", on: connection),
                 try StreamSnapshotQueries.load([], on: connection))
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
                _ = try await client.withConnection { try StreamSnapshotQueries.load(["s", "bad"], on: $0) }
            } throws: { error in
                (error as? StoreError)?.code == .rowData && (error as? StoreError)?.context.hasPrefix("read stream bad: ") == true
            }
        }
    }
}
