import CountdownDomain
import CountdownStore
import Postgres
import Testing

/// The facade the flows hold: the settler's one write settles ledger rows and clears refused tokens together.
@Suite struct StoreClientTests {
    @Test func settlingWritesTheOutcomesAndClearsTheRefusedTokensInOneGo() async throws {
        try await StoreDatabase.with(prefix: "store_client") { client in
            try await client.seed(DeviceTokenQueriesTests.rows + """
                INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status, claimed_until, claimed_by) VALUES
                    ('s', 'u', 'd1', 'sending', now() + interval '1 minute', 'me'),
                    ('s', 'u', 'd3', 'sending', now() + interval '1 minute', 'me');
                """)
            let store: any StartOutcomeSettling = StoreClient(client)
            let key = { (device: String) in StartLedger.Claim(.init(stream: "s", user: "u", device: device), generation: 1) }
            let notWritten = try await store.settle([
                StartLedger.Settlement(key("d1"), owner: "me", status: .sent, reason: nil),
                StartLedger.Settlement(key("d3"), owner: "me", status: .failed, reason: "UNREGISTERED"),
            ], refused: [.init(device: "d3", token: .fcm, value: "same", reason: "UNREGISTERED", stream: "s")])
            #expect(try await client.lines("""
                SELECT device_id || ' ' || status || ' ' || (claimed_until IS NULL) FROM countdown_start_ledger ORDER BY device_id
                """) == ["d1 sent true", "d3 failed true"])
            #expect(try await DeviceTokenQueriesTests.devices(client).contains("d3 - same"))
            #expect(notWritten.isEmpty)
        }
    }
}
