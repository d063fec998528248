import CountdownConsole
import CountdownDomain
import CountdownStore
import Foundation
import Testing

@Suite("Console against PostgreSQL")
struct ConsoleIntegrationTests {
    @Test func streamPageTellsTheStoryAndEscapesTheTitle() async throws {
        try await ConsoleFixture.with { console in
            try await console.seed(title: "<script>alert('xss')</script>")
            try await console.sql("UPDATE streams SET planned_start_at = planned_start_at + interval '30 minutes' WHERE id = 's1'")
            let page = await console.get("/streams/s1")
            #expect(page.status == 200)
            #expect(page.body.contains("&lt;script&gt;alert(&#39;xss&#39;)&lt;/script&gt;"))
            #expect(!page.body.contains("<script>"))
            #expect(page.headers["Content-Security-Policy"]?.contains("default-src 'none'") == true)
            #expect(page.body.contains("rescheduled"))
            #expect(page.body.contains("not eligible: not_ios"))
            let json = await console.get("/streams/s1", json: true)
            #expect((json.json["plannedStartHistory"] as? [Any])?.count == 1)
            #expect(((json.json["report"] as? [String: Any])?["title"] as? String) == "<script>alert('xss')</script>")
        }
    }

    @Test func devicesAndUsersShowMaskedTokensOnly() async throws {
        try await ConsoleFixture.with { console in
            try await console.seed()
            let device = await console.get("/devices/d1")
            #expect(device.status == 200)
            #expect(device.body.contains("…FCMLAST8") && device.body.contains("…PTSLAST8"))
            #expect(!device.body.contains("fcm-token-aaaa"))
            let user = await console.get("/users/u1", json: true)
            #expect(!user.body.contains("fcm-token-"))
            #expect(user.body.contains("…ANDLAST8"))
            #expect(await console.get("/devices/nope").status == 404)
        }
    }

    @Test func searchFindsStreamsDevicesAndUsers() async throws {
        try await ConsoleFixture.with { console in
            try await console.seed()
            let found = await console.get("/search", query: [("q", "s1")])
            #expect(found.status == 303 && found.headers["Location"] == "/streams/s1")
            #expect(await console.get("/search", query: [("q", "missing")]).status == 404)
        }
    }

    @Test func anOperatorCancelsThroughTheConfirmationAndTheAuditHasIt() async throws {
        try await ConsoleFixture.with { console in
            try await console.seed()
            let confirmation = await console.get("/streams/s1/cancel")
            #expect(confirmation.status == 200 && confirmation.body.contains("name=\"csrf_token\""))
            let token = await console.csrfToken(for: "/streams/s1/cancel")
            let done = await console.post("/streams/s1/cancel", form: [("csrf_token", token), ("reason", "creator asked")])
            #expect(done.status == 200)
            #expect(try await console.value("SELECT status FROM streams WHERE id = 's1'", as: String.self) == "cancelled")
            let audit = try await console.auditRows()
            #expect(audit.count == 1)
            #expect(audit.first?.actor == "ada" && audit.first?.role == "operator" && audit.first?.action == "stream.cancel")
            #expect(audit.first?.target == "s1" && audit.first?.reason == "creator asked" && audit.first?.outcome.hasPrefix("done") == true)
            #expect(await console.get("/audit").body.contains("creator asked"))
        }
    }

    @Test func viewersForgedTokensAndMissingReasonsChangeNothingButAreAudited() async throws {
        try await ConsoleFixture.with { console in
            try await console.seed()
            let token = await console.csrfToken(for: "/streams/s1/cancel")
            for json in [false, true] {
                #expect(await console.post("/streams/s1/cancel", as: .viewer, json: json, form: [("csrf_token", token), ("reason", "r")]).status == 403)
                #expect(await console.post("/streams/s1/cancel", json: json, form: [("csrf_token", "1.forged"), ("reason", "r")]).status == 403)
                #expect(await console.post("/streams/s1/cancel", json: json, form: [("reason", "r")]).status == 403)
                #expect(await console.post("/streams/s1/cancel", json: json, form: [("csrf_token", token), ("reason", " ")]).status == 400)
            }
            #expect(try await console.value("SELECT status FROM streams WHERE id = 's1'", as: String.self) == "scheduled")
            let audit = try await console.auditRows()
            #expect(audit.count == 8)
            #expect(audit.allSatisfy { $0.outcome.hasPrefix("refused") })
            #expect(audit.contains { $0.actor == "vic" && $0.role == "viewer" })
            #expect(console.logs.lines.filter { $0.contains("console action") }.count == 8)
        }
    }

    @Test func headersFromAnUntrustedAddressAreIgnored() async throws {
        try await ConsoleFixture.with { console in
            try await console.seed()
            for json in [false, true] {
                #expect(await console.get("/", as: .untrusted, json: json).status == 401)
                #expect(await console.get("/streams/s1", as: .untrusted, json: json).status == 401)
                #expect(await console.post("/streams/s1/cancel", as: .untrusted, json: json, form: [("reason", "r")]).status == 401)
            }
            #expect(try await console.value("SELECT status FROM streams WHERE id = 's1'", as: String.self) == "scheduled")
        }
    }

    /// The pause goes through PostgreSQL's `countdown_pause` (as `countdown-admin pause` does), never Redis: the
    /// workers' mirror carries it there. The fleet page shows who, why and since when.
    @Test func pauseAndResumeGoThroughThePauseStoreAndShowWhoWhyAndSince() async throws {
        try await ConsoleFixture.with { console in
            let token = await console.csrfToken(for: "/pause")
            #expect(await console.post("/pause", form: [("csrf_token", token), ("kind", "start"), ("reason", "APNs incident")]).status == 200)
            let rows = try await console.client.withConnection { try PauseStore.all(on: $0) }
            #expect(rows.map { [$0.kind, $0.actor, $0.reason] } == [["start", "countdown-console (ada)", "APNs incident"]])
            #expect(rows.first?.paused == true)
            #expect(try await console.queue.pausedKinds().isEmpty, "the console leaves Redis to the workers' mirror")
            let fleet = await console.get("/", json: true)
            let paused = fleet.json["paused"] as? [[String: Any]]
            #expect(paused?.count == 1 && paused?.first?["kind"] as? String == "start" && paused?.first?["reason"] as? String == "APNs incident")
            #expect(paused?.first?["actor"] as? String == "countdown-console (ada)" && paused?.first?["since"] is String)
            let html = await console.get("/")
            #expect(html.body.contains("countdown-console (ada)") && html.body.contains("APNs incident"))

            // A pause countdown-admin wrote shows the same way, and the console's resume lifts it.
            try await console.client.withConnection {
                _ = try PauseStore.pause(kinds: ["reminder"], actor: "countdown-admin (alice)", reason: "FCM quota", on: $0)
            }
            #expect(await console.get("/").body.contains("countdown-admin (alice)"))
            #expect((await console.get("/resume", json: true)).json["count"] as? Int == 2)
            #expect(await console.post("/pause", form: [("csrf_token", token), ("kind", "bogus"), ("reason", "r")]).status == 400)
            let resumed = await console.post("/resume", form: [("csrf_token", token), ("kind", ""), ("reason", "over")])
            #expect(resumed.status == 200 && resumed.body.contains("2 paused kind(s)"))
            #expect(((await console.get("/", json: true)).json["paused"] as? [Any])?.isEmpty == true)
            let after = try await console.client.withConnection { try PauseStore.all(on: $0) }
            #expect(after.allSatisfy { !$0.paused && $0.actor == "countdown-console (ada)" })
            #expect(after.count == CountdownJob.Kind.allCases.count, "resuming every kind records each, as countdown-admin resume does")
        }
    }

    @Test func aBulkActionOverTheLimitIsRefusedWithTheCount() async throws {
        try await ConsoleFixture.with { console in
            try await console.seed()
            try await console.sql("""
                INSERT INTO countdown_token_invalidations (device_id, token_kind, old_value, reason)
                SELECT 'd1', 'fcm', 'old-token-' || n, 'unregistered' FROM generate_series(1, 1001) AS n
                """)
            let confirmation = await console.get("/tokens/restore", json: true, query: [("since", "1h")])
            #expect(confirmation.json["count"] as? Int == 1001)
            let token = await console.csrfToken(for: "/pause")
            let refused = await console.post("/tokens/restore", form: [("csrf_token", token), ("since", "1h"), ("reason", "guard tripped")])
            #expect(refused.status == 409 && refused.body.contains("1001"))
            #expect(try await console.value("SELECT count(*) FROM countdown_token_invalidations WHERE restored_at IS NOT NULL", as: Int.self) == 0)
            #expect(try await console.auditRows().first?.outcome.contains("1001") == true)
        }
    }

    @Test func everyListPageAnswersInHTMLAndJSON() async throws {
        try await ConsoleFixture.with { console in
            try await console.seed()
            for path in ["/", "/dead", "/quarantine", "/tokens", "/audit", "/streams/s1", "/devices/d1", "/users/u1"] {
                let html = await console.get(path, as: .viewer)
                #expect(html.status == 200, "\(path)")
                #expect(html.headers["Content-Type"]?.hasPrefix("text/html") == true)
                #expect(html.body.contains("<h1>") && html.body.contains("<main id=\"main\">"))
                #expect(!html.body.contains("csrf_token"))
                let json = await console.get(path, as: .viewer, json: true)
                #expect(json.status == 200 && !json.json.isEmpty, "\(path)")
            }
        }
    }
}
