import CountdownStore
import Postgres
import Testing

/// End claims name their worker: another worker takes a claim at once when its owner is dead, otherwise only
/// once it expired.
@Suite struct SessionEndClaimTests {
    @Test func aDeadOwnersEndClaimsAreTakenOverAtOnce() async throws {
        try await MigratedDatabase.with(prefix: "endclaim") { client in
            try await client.transaction { c in
                try c.execute("INSERT INTO users (id, display_name) VALUES ('u', 'User')")
                try c.execute("INSERT INTO devices (device_id, user_id, platform, fcm_token) VALUES ('d1', 'u', 'ios', 'f1'), ('d2', 'u', 'ios', 'f2')")
                try c.execute("INSERT INTO streams (id, title, planned_start_at, status) VALUES ('s', 'S', now(), 'cancelled')")
                try c.execute("INSERT INTO live_activity_sessions (stream_id, device_id, live_activity_token) VALUES ('s', 'd1', 'r1'), ('s', 'd2', 'r2')")
                try c.execute("""
                    INSERT INTO countdown_session_end_claims (stream_id, device_id, claimed_until, claimed_by)
                    VALUES ('s', 'd1', now() + interval '1 hour', 'gone'), ('s', 'd2', now() + interval '1 hour', 'alive')
                    """)
            }
            let owners = try await client.withConnection { try SessionQueries.endClaimOwners("s", except: "me", on: $0) }
            #expect(Set(owners) == ["gone", "alive"])
            let none = try await client.transaction { try SessionQueries.claimEnds("s", device: nil, seconds: 60, owner: "me", on: $0) }
            #expect(none.isEmpty, "unexpired claims of workers not known dead are kept")
            let taken = try await client.transaction {
                try SessionQueries.claimEnds("s", device: nil, seconds: 60, owner: "me", deadOwners: ["gone"], on: $0)
            }
            #expect(taken == ["d1"])
            let holders: [String] = try await client.query("SELECT device_id || '=' || claimed_by AS h FROM countdown_session_end_claims ORDER BY 1")
                .map { try $0.decode("h") }
            #expect(holders == ["d1=me", "d2=alive"])
        }
    }
}
