import CountdownStore
import Postgres
import Testing

/// Which streams the reconciler checks, page by page, and which of them still have a device without a start.
@Suite struct ReconcileQueriesTests {
    @Test func candidatesAreScheduledStreamsNotLongPastExpiryAndEndedOnesWithSessions() async throws {
        try await StoreDatabase.with(prefix: "store_reconcile_pages") { client in
            try await client.seed("""
                INSERT INTO users (id, display_name) VALUES ('u', 'U');
                INSERT INTO devices (device_id, user_id, platform) VALUES ('d', 'u', 'ios');
                INSERT INTO streams (id, title, planned_start_at, status) VALUES
                    ('a', 'soon', now() + interval '1 hour', 'scheduled'),
                    ('b', 'expired two days ago', now() - interval '2 days', 'scheduled'),
                    ('c', 'expired 19 hours ago', now() - interval '20 hours', 'scheduled'),
                    ('d', 'started, a session left', now(), 'started'),
                    ('e', 'cancelled, no session', now() + interval '1 hour', 'cancelled'),
                    ('f', 'expired, a session left', now() - interval '3 days', 'expired');
                INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token) VALUES
                    ('d', 'd', 'u', 'run-d'), ('f', 'd', 'u', 'run-f');
                """)
            let (count, pages, longer) = try await client.withConnection { connection in
                var pages: [[String]] = []
                var cursor = ""
                repeat {
                    pages.append(try ReconcileQueries.page(after: cursor, limit: 2, expireAfter: 3600, on: connection))
                    cursor = pages.last?.last ?? cursor
                } while pages.last?.isEmpty == false && pages.count < 10
                return (try ReconcileQueries.count(expireAfter: 3600, on: connection), pages,
                        try ReconcileQueries.count(expireAfter: 2 * 86400, on: connection))
            }
            #expect(pages == [["a", "c"], ["d", "f"], []])
            #expect(count == 4)
            #expect(longer == 5, "with a longer expiry the stream planned two days ago is still checked")
        }
    }

    /// One stream per case, each with one user and one device, the start fan-out done for its planned start.
    struct Case {
        var id: String
        var status = "scheduled"
        var starts = "now() + interval '30 minutes'"
        var platform = "ios"
        var pushToStart = "pts"
        var fanoutDone = true
        var optedOut = false
        /// status, reason, claimed_until, token_hash
        var ledger: (String, String?, String?, String?)?
        var unstarted: Bool
    }

    static func seed(_ cases: [Case], on client: PostgresClient) async throws {
        for item in cases {
            let id = item.id
            try await client.transaction { connection in
                try connection.execute("INSERT INTO users (id, display_name) VALUES ($1, $1)", [id])
                try connection.execute("""
                    INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token) VALUES ($1, $1, $2, 'fcm-' || $1, $3)
                    """, [id, item.platform, item.pushToStart])
                try connection.execute("INSERT INTO streams (id, title, planned_start_at, status) VALUES ($1, $1, \(item.starts), $2)",
                                       [id, item.status])
                try connection.execute("INSERT INTO stream_participants (stream_id, user_id, role) VALUES ($1, $1, 'guest')", [id])
                if item.fanoutDone {
                    try connection.execute("""
                        INSERT INTO countdown_stream_progress (stream_id, start_done_for) SELECT id, planned_start_at FROM streams WHERE id = $1
                        """, [id])
                }
                if item.optedOut {
                    try connection.execute("INSERT INTO notification_preferences (user_id, category, enabled) VALUES ($1, 'live_stream', false)",
                                           [id])
                }
                if let (status, reason, claimedUntil, hash) = item.ledger {
                    try connection.execute("""
                        INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status, reason, claimed_until, token_hash)
                        VALUES ($1, $1, $1, $2, $3, now() + $4::interval, $5)
                        """, [id, status, reason, claimedUntil, hash])
                }
            }
        }
    }

    @Test func streamsWithUnstartedDevices() async throws {
        let cases = [
            Case(id: "no-ledger-row", unstarted: true),
            Case(id: "pending", ledger: ("pending", nil, nil, nil), unstarted: true),
            Case(id: "skipped", ledger: ("skipped", "opted_out", nil, nil), unstarted: true),
            Case(id: "sending-claim-expired", ledger: ("sending", nil, "-1 minute", nil), unstarted: true),
            Case(id: "sending-claim-held", ledger: ("sending", nil, "1 minute", nil), unstarted: false),
            Case(id: "sent", ledger: ("sent", nil, nil, nil), unstarted: false),
            Case(id: "dead-token-replaced", ledger: ("failed", "dead_token:fcm", nil, TokenHash.of(fcm: "fcm-old", pts: "pts")), unstarted: true),
            Case(id: "dead-token-same", ledger: ("failed", "dead_token:fcm", nil, TokenHash.of(fcm: "fcm-dead-token-same", pts: "pts")),
                 unstarted: false),
            Case(id: "failed-rejected", ledger: ("failed", "rejected", nil, TokenHash.of(fcm: "fcm-old", pts: "pts")), unstarted: false),
            Case(id: "fanout-not-done", fanoutDone: false, unstarted: false),
            Case(id: "opted-out", optedOut: true, unstarted: false),
            Case(id: "android", platform: "android", unstarted: false),
            Case(id: "no-push-to-start", pushToStart: "", unstarted: false),
            Case(id: "already-started", status: "started", unstarted: false),
            Case(id: "planned-start-passed", starts: "now() - interval '1 minute'", unstarted: false),
        ]
        try await StoreDatabase.with(prefix: "store_reconcile_unstarted") { client in
            try await Self.seed(cases, on: client)
            let ids = cases.map(\.id) + ["missing"]
            let found = try await client.withConnection { try ReconcileQueries.streamsWithUnstartedDevices(ids, on: $0) }
            #expect(Set(found) == Set(cases.filter(\.unstarted).map(\.id)))
            #expect(found.count == Set(found).count, "each stream once")
            let none = try await client.withConnection { try ReconcileQueries.streamsWithUnstartedDevices([], on: $0) }
            #expect(none.isEmpty)
        }
    }
}
