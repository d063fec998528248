import Testing

@Suite("Console: a stream's broadcast channel")
struct ConsoleChannelTests {
    /// SPEC 12.5: the stream page shows the stream's channel (id, state, what it shows); nothing when it has none.
    @Test func theStreamPageShowsItsChannel() async throws {
        try await ConsoleFixture.with { console in
            try await console.seed()
            #expect(!(await console.get("/streams/s1")).body.contains("Broadcast channel"), "no channel, no table")
            try await console.sql("""
                INSERT INTO countdown_broadcast_channels (stream_id, state, channel_id, used_at, shown_start_at)
                SELECT 's1', 'in_use', 'dHN0LWNoYW5uZWwtMQ==', now(), planned_start_at FROM streams WHERE id = 's1'
                """)
            let page = await console.get("/streams/s1")
            #expect(page.body.contains("Broadcast channel"))
            #expect(page.body.contains("dHN0LWNoYW5uZWwtMQ==") && page.body.contains("in_use"))
            let json = await console.get("/streams/s1", json: true)
            #expect(((json.json["channels"] as? [[String: Any]])?.first?["channelID"] as? String) == "dHN0LWNoYW5uZWwtMQ==")
        }
    }
}
