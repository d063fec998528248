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
            #expect(page.body.contains("planned start moved"))
            #expect(page.body.contains("not eligible: not_ios"))
            let json = await console.get("/streams/s1", json: true)
            #expect((json.json["plannedStartHistory"] as? [Any])?.count == 1)
            #expect(((json.json["report"] as? [String: Any])?["title"] as? String) == "<script>alert('xss')</script>")
        }
    }

    /// After a reschedule, deliveries and a cancel, the stream page is one timeline: every event with who and its
    /// state, a "now" row between the past and the planned, a device whose token was cleared marked unreachable.
    @Test func theStreamPageIsOneTimelineOfEverything() async throws {
        try await ConsoleFixture.with { console in
            try await console.seed()
            try await console.sql("UPDATE streams SET planned_start_at = planned_start_at + interval '30 minutes' WHERE id = 's1'")
            try await console.startsSent(minutesAgo: 5)
            try await console.sql("""
                INSERT INTO countdown_session_deliveries (stream_id, device_id, channel, token, shown_start_at, accepted_at, seq)
                SELECT 's1', 'd2', 'android_countdown', 'fcm', planned_start_at - interval '30 minutes', now() - interval '4 minutes', 2
                FROM streams WHERE id = 's1'
                """)
            try await console.sql("""
                INSERT INTO countdown_reminder_deliveries (stream_id, device_id, user_id, status, sent_at)
                VALUES ('s1', 'd2', 'u1', 'sent', now() - interval '3 minutes')
                """)
            try await console.client.transaction {
                try DeviceTokenQueries.clear([.init(device: "d1", token: .pushToStart, value: "pts-token-bbbbbbbbbbbb-PTSLAST8",
                                                  reason: "BadDeviceToken", stream: "s1")], on: $0)
            }
            let before = await console.get("/streams/s1")
            #expect(before.body.contains("Android countdown update accepted") && before.body.contains("Android countdown update pending"))
            #expect(before.body.contains("reminder sent") && before.body.contains("cannot be reached now"))
            #expect(before.body.contains("<tr class=\"now\">") && before.body.contains("planned start</td>"))
            let nowIndex = try #require(before.body.range(of: "<tr class=\"now\">")).lowerBound
            let plannedIndex = try #require(before.body.range(of: "<td>planned start</td>")).lowerBound
            #expect(nowIndex < plannedIndex, "the planned start comes after now")

            let token = await console.csrfToken(for: "/streams/s1/cancel")
            #expect(await console.post("/streams/s1/cancel", form: [("csrf_token", token), ("reason", "creator asked")]).status == 200)
            let after = await console.get("/streams/s1")
            #expect(after.body.contains("operator: stream.cancel") && after.body.contains("ada (operator)") && after.body.contains("why: creator asked"))
            #expect(after.body.contains("href=\"/devices/d1\"") && after.body.contains("href=\"/users/u1\""))
            let json = await console.get("/streams/s1", json: true)
            let events = (json.json["timeline"] as? [[String: Any]])?.compactMap { $0["event"] as? String } ?? []
            #expect(events.contains("operator: stream.cancel") && events.contains("start sent") && events.contains("token cleared"), "\(events)")
            #expect((json.json["unreachable"] as? [String: Any])?["d1"] != nil)
            // The audit page links its targets.
            #expect(await console.get("/audit").body.contains("<a href=\"/streams/s1\">s1</a>"))
        }
    }

    /// The fleet page opens with its verdict, as of when, reloads itself, and charts the last hour from PostgreSQL.
    @Test func theFleetPageGivesAVerdictAndChartsTheLastHour() async throws {
        try await ConsoleFixture.with { console in
            try await console.seed()
            try await console.sql("UPDATE streams SET planned_start_at = now() + interval '5 minutes' WHERE id = 's1'")
            try await console.startsSent(minutesAgo: 2)
            let healthy = await console.get("/")
            #expect(healthy.body.contains("<section class=\"verdict healthy\"") && healthy.body.contains("<meta http-equiv=\"refresh\" content=\"30\">"))
            #expect(healthy.body.contains("As of ") && healthy.body.contains(">Refresh now</a>"))
            #expect(healthy.body.contains("<polyline") && healthy.body.contains("start ios: 1 pushes") && healthy.body.contains("start android: 1 pushes"),
                    "\(healthy.body)")
            #expect(healthy.body.contains("Android in the last hour") && healthy.body.contains("start sent"))
            let verdictIndex = try #require(healthy.body.range(of: "class=\"verdict")).lowerBound
            let queueIndex = try #require(healthy.body.range(of: "<caption>Queue</caption>")).lowerBound
            #expect(verdictIndex < queueIndex, "the verdict comes first")
            let json = await console.get("/", json: true)
            #expect((json.json["verdict"] as? [String: Any])?["state"] as? String == "healthy")
            #expect(((json.json["charts"] as? [String: Any])?["pushes"] as? [Any])?.count == 2)

            try await console.client.withConnection {
                _ = try PauseQueries.pause(kinds: ["reminder"], actor: "countdown-admin (alice)", reason: "FCM incident", on: $0)
            }
            let paused = await console.get("/")
            #expect(paused.body.contains("<section class=\"verdict paused\"") && paused.body.contains("reminder paused by countdown-admin (alice): FCM incident"))
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
            let missing = await console.get("/search", query: [("q", "missing")])
            #expect(missing.status == 404 && missing.body.contains("value=\"missing\""), "the query stays in the box")
        }
    }

    @Test func searchFindsNamesTitlesAndIdPrefixes() async throws {
        try await ConsoleFixture.with { console in
            try await console.seed(title: "Akşam yayını")
            try await console.seed(stream: "s2", title: "Sabah 100% canlı", users: false)
            // A name: one user found opens it.
            let name = await console.get("/search", query: [("q", "seli")])
            #expect(name.status == 303 && name.headers["Location"] == "/users/u1")
            // A title, any case.
            let title = await console.get("/search", query: [("q", "AKŞAM")])
            #expect(title.status == 303 && title.headers["Location"] == "/streams/s1", "\(title.body)")
            // An id prefix finds several: listed, the query kept in the box.
            let prefix = await console.get("/search", query: [("q", "d")])
            #expect(prefix.status == 200 && prefix.body.contains("href=\"/devices/d1\"") && prefix.body.contains("href=\"/devices/d2\""))
            #expect(prefix.body.contains("value=\"d\"") && prefix.body.contains("id prefix"))
            let json = await console.get("/search", json: true, query: [("q", "s")])
            let results = (json.json["results"] as? [[String: Any]])?.compactMap { $0["path"] as? String }
            #expect(results == ["/streams/s1", "/streams/s2", "/users/u1"], "id prefixes first, then names (Selin): \(json.body)")
            // LIKE's wildcards are text: "%" finds only the title that has one.
            let percent = await console.get("/search", query: [("q", "100%")])
            #expect(percent.status == 303 && percent.headers["Location"] == "/streams/s2")
        }
    }

    @Test func streamsStartingSoonAreListedAPageAtATime() async throws {
        try await ConsoleFixture.with { console in
            try await console.seed()
            try await console.sql("""
                INSERT INTO streams (id, title, planned_start_at) SELECT 'soon' || n, 'Soon ' || n, now() + make_interval(mins => n)
                FROM generate_series(1, 60) AS n
                """)
            try await console.sql("INSERT INTO streams (id, title, planned_start_at) VALUES ('later', 'Later', now() + interval '3 days')")
            let first = await console.get("/streams", json: true, query: [("status", "scheduled"), ("starting", "24h")])
            let ids = (first.json["streams"] as? [[String: Any]])?.compactMap { $0["id"] as? String } ?? []
            #expect(ids.count == 50 && ids.first == "soon1" && ids.last == "soon50")
            #expect(first.json["nextAfter"] as? String == "soon50")
            let second = await console.get("/streams", json: true, query: [("status", "scheduled"), ("starting", "24h"), ("after", "soon50")])
            let rest = (second.json["streams"] as? [[String: Any]])?.compactMap { $0["id"] as? String } ?? []
            #expect(rest == (51...60).map { "soon\($0)" } + ["s1"], "s1 starts in 2 hours; later is outside the window")
            #expect(second.json["nextAfter"] == nil)
            let html = await console.get("/streams", query: [("status", "scheduled"), ("starting", "24h")])
            #expect(html.status == 200 && html.body.contains("href=\"/streams?status=scheduled&amp;starting=24h&amp;after=soon50\""))
            #expect(html.body.contains("(in 5 min)") && html.body.contains("href=\"/streams/soon1\""))
            #expect(await console.get("/streams", query: [("status", "bogus")]).status == 400)
            #expect(await console.get("/streams", query: [("starting", "tomorrow")]).status == 400)
        }
    }

    @Test func timesShowInTheViewersZoneOrTheDevicesZone() async throws {
        try await ConsoleFixture.with { console in
            try await console.seed()
            try await console.sql("UPDATE streams SET planned_start_at = '2026-12-05T20:30:00Z' WHERE id = 's1'")
            try await console.sql("UPDATE devices SET timezone = 'Asia/Tokyo', updated_at = '2026-12-05T20:30:00Z' WHERE device_id = 'd1'")
            #expect(await console.get("/streams/s1").body.contains(">2026-12-05 20:30 UTC</time>"))
            let istanbul = await console.get("/streams/s1", query: [("tz", "Europe/Istanbul")])
            #expect(istanbul.body.contains("<time datetime=\"2026-12-05T20:30:00Z\">2026-12-05 23:30 +03:00</time>"))
            #expect(await console.get("/streams/s1", query: [("tz", "Mars/Olympus")]).status == 400)
            let chosen = await console.get("/zone", query: [("tz", "America/New_York"), ("back", "/streams/s1")])
            #expect(chosen.status == 303 && chosen.headers["Location"] == "/streams/s1")
            #expect(chosen.headers["Set-Cookie"]?.hasPrefix("countdown_console_tz=America%2FNew_York;") == true, "\(chosen.headers)")
            #expect(await console.get("/zone", query: [("tz", "UTC"), ("back", "//evil.example")]).headers["Location"] == "/")
            let withCookie = await console.get("/streams/s1", extraHeaders: [("Cookie", "a=b; countdown_console_tz=America%2FNew_York")])
            #expect(withCookie.body.contains(">2026-12-05 15:30 -05:00</time>"))
            let device = await console.get("/devices/d1")
            #expect(device.body.contains("in the device's time zone, Asia/Tokyo") && device.body.contains(">2026-12-06 05:30 +09:00</time>"))
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

    /// The audit row is written before the action: when it cannot be written, nothing is done; when the action's end
    /// cannot be recorded, the row still says the action started.
    @Test func noActionIsDoneWithoutItsAuditRow() async throws {
        try await ConsoleFixture.with { console in
            try await console.seed()
            try await console.seed(stream: "s2", users: false)
            let token = await console.csrfToken(for: "/streams/s1/cancel")
            try await console.script("""
                CREATE FUNCTION refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit refused'; END $$;
                CREATE TRIGGER refuse_insert BEFORE INSERT ON countdown_audit FOR EACH ROW EXECUTE FUNCTION refuse_audit();
                """)
            #expect(await console.post("/streams/s1/cancel", form: [("csrf_token", token), ("reason", "creator asked")]).status == 500)
            #expect(try await console.value("SELECT status FROM streams WHERE id = 's1'", as: String.self) == "scheduled")
            try await console.script("""
                DROP TRIGGER refuse_insert ON countdown_audit;
                CREATE TRIGGER refuse_update BEFORE UPDATE ON countdown_audit FOR EACH ROW EXECUTE FUNCTION refuse_audit();
                """)
            #expect(await console.post("/streams/s2/cancel", form: [("csrf_token", token), ("reason", "creator asked")]).status == 500)
            #expect(try await console.value("SELECT status FROM streams WHERE id = 's2'", as: String.self) == "cancelled")
            let rows = try await console.auditRows()
            #expect(rows.map(\.target) == ["s2"] && rows.first?.outcome.hasPrefix("started") == true, "\(rows)")
        }
    }

    /// Past the per-user limit, actions are refused (429) without a row each: one row per user and minute sums them.
    @Test func aFloodOfActionsIsSummedInOneAuditRow() async throws {
        try await ConsoleFixture.with(auditLimiter: AuditLimiter(perMinute: 5, now: { Date(timeIntervalSince1970: 1_800_000_000) })) { console in
            try await console.seed()
            let token = await console.csrfToken(for: "/streams/s1/cancel")
            var statuses: [Int] = []
            for _ in 0..<25 {
                statuses.append(await console.post("/streams/s1/cancel", as: .viewer, form: [("csrf_token", token), ("reason", "r")]).status)
            }
            #expect(statuses == Array(repeating: 403, count: 5) + Array(repeating: 429, count: 20))
            #expect(await console.post("/streams/s1/cancel", form: [("csrf_token", token), ("reason", "r")]).status == 200,
                    "another user has a limit of their own")
            let rows = try await console.auditRows()
            #expect(rows.count == 7, "5 refusals, 1 summary, 1 cancel: \(rows.map(\.outcome))")
            let summary = try #require(rows.first { $0.action == "audit.limit" })
            #expect(summary.actor == "vic" && summary.outcome.hasPrefix("refused: 20 action(s) past the limit of 5 a minute"), "\(summary)")
            let metrics = console.service.metricsResponse()
            #expect(String(decoding: metrics.body, as: UTF8.self).contains("countdown_console_audit_limited_total 20"))
        }
    }

    @Test func shortTokensAreMaskedWhole() async throws {
        try await ConsoleFixture.with { console in
            try await console.seed()
            try await console.sql("""
                INSERT INTO countdown_token_invalidations (device_id, token_kind, old_value, reason, user_id)
                VALUES ('d1', 'fcm', 'short-tok-123456', 'unregistered', 'u1')
                """)
            for json in [false, true] {
                let page = await console.get("/tokens", json: json)
                #expect(page.status == 200 && !page.body.contains("123456") && !page.body.contains("tok-"), "\(page.body)")
            }
        }
    }

    /// A confirmation states the effect of exactly what its form posts: the pause's kind and the restore's `since` are
    /// hidden fields of the posting form (changed through a `GET` form that counts again); headings are in words.
    @Test func confirmationPagesStateTheExactEffectOfWhatIsPosted() async throws {
        try await ConsoleFixture.with { console in
            try await console.seed()
            let pause = await console.get("/pause", query: [("kind", "reminder")])
            #expect(pause.status == 200 && pause.body.contains("<h1>Pause reminder jobs?</h1>"), "\(pause.body)")
            #expect(pause.body.contains("claiming reminder jobs") && pause.body.contains("(1 kind(s))") && !pause.body.contains("every kind of job"))
            let pausePost = pause.body.components(separatedBy: "<form class=\"action\"").last ?? ""
            #expect(pausePost.contains("<input type=\"hidden\" name=\"kind\" value=\"reminder\">") && !pausePost.contains("<select"))
            #expect(pausePost.contains("<button type=\"submit\">Pause reminder jobs</button>"))
            let all = await console.get("/pause")
            #expect(all.body.contains("<h1>Pause every kind of job?</h1>") && all.body.contains("(\(CountdownJob.Kind.allCases.count) kind(s))"))

            let restore = await console.get("/tokens/restore", query: [("since", "2h")])
            let restorePost = restore.body.components(separatedBy: "<form class=\"action\"").last ?? ""
            #expect(restorePost.contains("<input type=\"hidden\" name=\"since\" value=\"2h\">") && !restorePost.contains("type=\"text\""))
            #expect(restore.body.contains("<h1>Restore the tokens cleared since 2h?</h1>"))

            try await console.sql("INSERT INTO stream_reminders (stream_id, user_id) VALUES ('s1', 'u2')")
            let cancel = await console.get("/streams/s1/cancel")
            #expect(cancel.body.contains("<h1>Cancel stream s1?</h1>") && !cancel.body.contains("stream.cancel"))
            #expect(cancel.body.contains("<dt>Active reminders cancelled</dt><dd>1</dd>") && cancel.body.contains("<dt>Devices of the creator and guests</dt><dd>2</dd>"))
            #expect(cancel.body.contains("1 active reminder(s) are cancelled"))
            let json = await console.get("/streams/s1/cancel", json: true)
            #expect((json.json["cancelCounts"] as? [String: Any])?["activeReminders"] as? Int == 1 && json.json["title"] as? String == "Cancel stream s1")
        }
    }

    /// A confirmation for something that is not there is a 404; error pages are styled and lead back.
    @Test func missingThingsAre404AndErrorsLeadBack() async throws {
        try await ConsoleFixture.with { console in
            try await console.seed()
            for path in ["/dead/start:nope/retry", "/dead/start:nope/drop", "/quarantine/nope/retry", "/quarantine/nope/drop", "/streams/nope/cancel"] {
                let page = await console.get(path)
                #expect(page.status == 404 && !page.body.contains("csrf_token"), "\(path)")
                #expect(page.body.contains("<h1>Not found</h1>") && page.body.contains("<a href=\"/\">Fleet</a>"), "\(path)")
                #expect(await console.get(path, json: true).status == 404)
            }
            let token = await console.csrfToken(for: "/pause")
            let noReason = await console.post("/pause", form: [("csrf_token", token), ("kind", "reminder"), ("reason", "")])
            #expect(noReason.status == 400 && noReason.body.contains("<a href=\"/pause?kind=reminder\">Back to the confirmation</a>"))
            let unauthorized = await console.get("/", as: .untrusted)
            #expect(unauthorized.status == 401 && unauthorized.body.contains("href=\"/console.css\"") && unauthorized.body.contains(">Try again</a>"))
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
            let rows = try await console.client.withConnection { try PauseQueries.all(on: $0) }
            #expect(rows.map { [$0.kind, $0.actor, $0.reason] } == [["start", "countdown-console (ada)", "APNs incident"]])
            #expect(rows.first?.paused == true)
            #expect(try await console.queue.pausedKinds().isEmpty, "the console leaves Redis to the workers' mirror")
            let fleet = await console.get("/", json: true)
            let paused = fleet.json["paused"] as? [[String: Any]]
            #expect(paused?.count == 1 && paused?.first?["kind"] as? String == "start" && paused?.first?["reason"] as? String == "APNs incident")
            #expect(paused?.first?["actor"] as? String == "countdown-console (ada)" && paused?.first?["since"] is String)
            #expect(paused?.first?["paused"] as? Bool == true, "the fleet page shows stats.paused's entries")
            let html = await console.get("/")
            #expect(html.body.contains("countdown-console (ada)") && html.body.contains("APNs incident"))

            // A pause countdown-admin wrote shows the same way, and the console's resume lifts it.
            try await console.client.withConnection {
                _ = try PauseQueries.pause(kinds: ["reminder"], actor: "countdown-admin (alice)", reason: "FCM quota", on: $0)
            }
            #expect(await console.get("/").body.contains("countdown-admin (alice)"))
            #expect((await console.get("/resume", json: true)).json["count"] as? Int == 2)
            #expect(await console.post("/pause", form: [("csrf_token", token), ("kind", "bogus"), ("reason", "r")]).status == 400)
            let resumed = await console.post("/resume", form: [("csrf_token", token), ("kind", ""), ("reason", "over")])
            #expect(resumed.status == 200 && resumed.body.contains("2 paused kind(s)"))
            #expect(((await console.get("/", json: true)).json["paused"] as? [Any])?.isEmpty == true)
            let after = try await console.client.withConnection { try PauseQueries.all(on: $0) }
            #expect(after.allSatisfy { !$0.paused && $0.actor == "countdown-console (ada)" })
            #expect(after.count == CountdownJob.Kind.allCases.count, "resuming every kind records each, as countdown-admin resume does")
        }
    }

    @Test func aBulkActionOverTheLimitIsRefusedWithTheCount() async throws {
        try await ConsoleFixture.with { console in
            try await console.seed()
            // 1,001 tokens restored already (they do not count), then 1,001 cleared on devices that could take them
            // back and 50 on devices holding a new token (they would not go back, so they do not count either).
            try await console.sql("""
                INSERT INTO devices (device_id, user_id, platform, fcm_token)
                SELECT 'e' || n, 'u1', 'android', CASE WHEN n > 1001 THEN 'new-token-' || n END FROM generate_series(1, 1051) AS n
                """)
            try await console.sql("""
                INSERT INTO countdown_token_invalidations (device_id, token_kind, old_value, reason, user_id, restored_at)
                SELECT 'e' || n, 'fcm', 'older-token-' || n, 'unregistered', 'u1', now() FROM generate_series(1, 1001) AS n
                """)
            try await console.sql("""
                INSERT INTO countdown_token_invalidations (device_id, token_kind, old_value, reason, user_id)
                SELECT 'e' || n, 'fcm', 'old-token-' || n, 'unregistered', 'u1' FROM generate_series(1, 1051) AS n
                """)
            let confirmation = await console.get("/tokens/restore", json: true, query: [("since", "1h")])
            #expect(confirmation.json["count"] as? Int == 1001)
            let token = await console.csrfToken(for: "/pause")
            let refused = await console.post("/tokens/restore", form: [("csrf_token", token), ("since", "1h"), ("reason", "guard tripped")])
            #expect(refused.status == 409 && refused.body.contains("1001"))
            #expect(try await console.value("SELECT count(*) FROM countdown_token_invalidations WHERE restored_at IS NOT NULL", as: Int.self) == 1001)
            #expect(try await console.auditRows().first?.outcome.contains("1001") == true)
            // Under the limit, the count is exactly what goes back.
            try await console.sql("UPDATE devices SET fcm_token = 'new' WHERE device_id IN ('e1', 'e2')")
            #expect((await console.get("/tokens/restore", json: true, query: [("since", "1h")])).json["count"] as? Int == 999)
            let done = await console.post("/tokens/restore", form: [("csrf_token", token), ("since", "1h"), ("reason", "guard tripped")])
            #expect(done.status == 200 && done.body.contains("restored 999 token(s)"), "\(done.body)")
        }
    }

    @Test func everyListPageAnswersInHTMLAndJSON() async throws {
        try await ConsoleFixture.with { console in
            try await console.seed()
            for path in ["/", "/dead", "/quarantine", "/tokens", "/audit", "/streams", "/streams/s1", "/devices/d1", "/users/u1"] {
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
