import CountdownStore
import Foundation
import Postgres
import Testing
import TestSupport

/// An `end` job and a `session_end` job racing on one session: the one that claims while the other deletes the
/// session (its end push accepted) finds nothing to claim, without a foreign-key error.
@Suite struct SessionEndClaimRaceTests {
    @Test func aClaimWaitingOnADeletedSessionClaimsNothing() async throws {
        try await TestDatabase.withFresh(prefix: "endrace", maxConnections: 3) { database, client in
            _ = try await Migrator().migrate(client)
            try await client.withConnection { c in
                try c.executeScript("""
                    INSERT INTO users (id, display_name) VALUES ('u', 'U');
                    INSERT INTO devices (device_id, user_id, platform, fcm_token) VALUES ('d1', 'u', 'ios', 'f1'), ('d2', 'u', 'ios', 'f2');
                    INSERT INTO streams (id, title, planned_start_at, status) VALUES ('s', 'S', now(), 'cancelled');
                    INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token)
                        VALUES ('s', 'd1', 'u', 't1'), ('s', 'd2', 'u', 't2');
                    """)
            }
            let deleter = PostgresSession(configuration: database.configuration)
            defer { deleter.close() }
            let claim = try await deleter.transaction { transaction -> Task<[String], any Error> in
                _ = try await transaction.run { try $0.execute("DELETE FROM live_activity_sessions WHERE stream_id = 's' AND device_id = 'd1'") }
                let claim = Task { try await client.withConnection { try SessionQueries.claimEnds("s", device: nil, seconds: 30, on: $0) } }
                try await waitUntil("the claim waits for the deleting transaction") {
                    try await client.withConnection { c in
                        try c.query("""
                            SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
                            """).first?.decode("n", as: Int.self) == 1
                    }
                }
                return claim
            }
            #expect(try await claim.value == ["d2"])
        }
    }
}
