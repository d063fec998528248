import CountdownDomain
import CountdownMaintenance
import CountdownStore
import Foundation
import HTTPServer

/// Server-rendered pages: one layout (skip link, navigation, search box, one `h1`, `main`), tables with captions
/// and column headers, forms with labels. Every value goes through `HTML`'s escaping interpolation.
struct ConsoleRender {
    let user: ConsoleUser?
    /// The search box's text (kept on the search page).
    var query: String?
    /// The viewer's zone and now.
    var times = ConsoleTimes(now: Date())
    /// The page's own path, for the zone form's way back.
    var path = "/"
    /// Seconds after which the browser loads the page again (a meta refresh), when set.
    var refreshSeconds: Int?

    func page(_ title: String, status: Int = 200, _ body: HTML) -> HTTPResponse {
        let zones = HTML.join(["UTC", "Europe/Istanbul", "Europe/London", "Europe/Berlin", "America/New_York", "America/Los_Angeles", "Asia/Tokyo"]
            .map { "<option value=\"\($0)\">" })
        let signedIn: HTML = user.map {
            """
            <p>Signed in as <strong>\($0.name)</strong> (\($0.role.rawValue))</p>
            <form class="zone" method="get" action="/zone"><label for="tz">Times shown in</label>
            <input type="text" id="tz" name="tz" list="zones" value="\(times.zone.identifier == "GMT" ? "UTC" : times.zone.identifier)" maxlength="64">
            <datalist id="zones">\(zones)</datalist><input type="hidden" name="back" value="\(path)"> <button type="submit">Use</button></form>
            """
        } ?? ""
        let refresh: HTML = refreshSeconds.map { "<meta http-equiv=\"refresh\" content=\"\($0)\">" } ?? ""
        let document: HTML = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(title) · Countdown console</title><link rel="stylesheet" href="/console.css">\(refresh)</head>
            <body><a class="skip" href="#main">Skip to content</a>
            <header><nav aria-label="Console"><ul>
            <li><a href="/">Fleet</a></li><li><a href="/streams?status=scheduled&amp;starting=24h">Starting soon</a></li><li><a href="/dead">Dead letters</a></li><li><a href="/quarantine">Quarantine</a></li>
            <li><a href="/tokens">Token invalidations</a></li><li><a href="/audit">Audit</a></li></ul></nav>
            <form role="search" method="get" action="/search"><label for="q">Id (or its beginning), stream title or user name</label>
            <input type="search" id="q" name="q" required maxlength="256" value="\(query ?? "")"> <button type="submit">Search</button></form>
            \(signedIn)</header>
            <main id="main"><h1>\(title)</h1>
            \(body)
            </main></body></html>
            """
        return HTTPResponse.text(document.text, status: status, contentType: "text/html; charset=utf-8")
    }

    func table(_ caption: String, _ headers: [String], _ rows: [[HTML]], empty: String = "None.") -> HTML {
        guard !rows.isEmpty else { return "<p>\(caption): \(empty)</p>" }
        let head = HTML.join(headers.map { "<th scope=\"col\">\($0)</th>" })
        let body = HTML.join(rows.map { row in "<tr>\(HTML.join(row.map { "<td>\($0)</td>" }))</tr>" })
        return "<table><caption>\(caption)</caption><thead><tr>\(head)</tr></thead><tbody>\(body)</tbody></table>"
    }

    func link(_ text: String, _ href: String) -> HTML { "<a href=\"\(href)\">\(text)</a>" }
    /// A time as the viewer reads it: absolute in their zone and how long ago or ahead (`datetime` in UTC).
    func time(_ date: Date?) -> HTML {
        guard let date else { return "—" }
        return "<time datetime=\"\(TimeArgument.format(date))\">\(times.absolute(date))</time> <span class=\"rel\">(\(times.relative(date)))</span>"
    }
    func text(_ value: String?) -> HTML { "\(value)" }
    func number(_ value: Int) -> HTML { "\(value)" }
    func streamLink(_ id: String) -> HTML { link(id, "/streams/" + ConsoleAction.segment(id)) }
    func deviceLink(_ id: String?) -> HTML { id.map { link($0, "/devices/" + ConsoleAction.segment($0)) } ?? "—" }
    func userLink(_ id: String?) -> HTML { id.map { link($0, "/users/" + ConsoleAction.segment($0)) } ?? "—" }
    func actionLink(_ text: String, _ action: ConsoleAction) -> HTML { user?.mayAct == true ? link(text, action.path) : "" }

    // MARK: pages

    func fleet(_ page: ConsolePages.Fleet) -> HTTPResponse {
        let stats = page.stats
        let queue = table("Queue", ["due now", "delayed", "running", "dead letters", "paused (held)", "oldest lateness"], [[
            number(stats.dueNow), number(stats.delayed), number(stats.leased), link(String(stats.dead), "/dead"), number(stats.pausedJobs),
            text(String(format: "%.1f s", stats.oldestLatenessSeconds)),
        ]])
        let kinds = table("Jobs by kind", ["kind", "jobs"], stats.jobsByKind.sorted { $0.key < $1.key }.map { [text($0.key), number($0.value)] })
        let paused = table("Paused kinds", ["kind", "by", "reason", "since"], page.paused.map {
            [text($0.kind), text($0.actor), text($0.reason), time($0.since)]
        }, empty: "nothing is paused")
        let pauseLinks: HTML = user?.mayAct == true ? "<p>\(link("Pause…", "/pause")) · \(link("Resume…", "/resume"))</p>" : ""
        let workers: HTML = page.workers.map { workers in
            table("Workers", ["worker", "alive", "heartbeat age"], workers.map {
                [text($0.id), $0.alive ? "<span class=\"ok\">yes</span>" : "<span class=\"warn\">no</span>", text(String(format: "%.1f s", $0.heartbeatAgeSeconds))]
            }, empty: "no worker has beaten in the last hour")
        } ?? "<p>Workers: not known to this console.</p>"
        let guardLine: HTML = page.tokenGuard.map { state in
            let status: HTML = state.tripped ? "<span class=\"warn\">tripped: tokens are not being cleared</span>" : "<span class=\"ok\">not tripped</span>"
            return "<p>Token guard: \(status) (last 60 s: \(state.refusals) token refusals of \(state.sends) sends; trips at \(state.minRefusals) and more than \(String(state.ratio)))</p>"
        } ?? ""
        let restoreLine: HTML = page.restoreGuard.map { record in
            "<p>Restore guard: <span class=\"warn\">tripped: the database went back in time; starts, backfills and reminders are held until countdown-admin restore-guard runs</span> (\(text(record)))</p>"
        } ?? ""
        let results = table("Start decisions in the last hour", ["result", "count"], stats.recentStartResults.sorted { $0.key < $1.key }.map {
            [text($0.key), number($0.value)]
        }, empty: "no start decisions in the last hour")
        let other = table("PostgreSQL", ["quarantined rows", "outbox backlog", "oldest outbox row", "reminders sent (last hour)"], [[
            link(String(page.quarantined), "/quarantine"), number(stats.outboxBacklog), text(String(format: "%.1f s", stats.outboxOldestAgeSeconds)),
            number(stats.remindersSentLastHour),
        ]])
        let streams = table("Streams by status", ["status", "streams"], stats.streamsByStatus.sorted { $0.key < $1.key }.map { [text($0.key), number($0.value)] })
        let android = table("Android in the last hour", ["what", "count"],
                            stats.recentAndroidStartResults.sorted { $0.key < $1.key }.map { [text("start \($0.key)"), number($0.value)] }
                                + stats.androidEndsLastHour.sorted { $0.key < $1.key }.map { [text("end: \($0.key)"), number($0.value)] },
                            empty: "no Android starts or ends in the last hour")
        var render = self
        render.refreshSeconds = Self.fleetRefreshSeconds
        return render.page("Fleet", "\(verdict(page))\(charts(page))\(queue)\(paused)\(pauseLinks)\(workers)\(guardLine)\(restoreLine)\(results)\(android)\(other)\(streams)\(kinds)")
    }

    /// How often the fleet page reloads itself.
    static let fleetRefreshSeconds = 30

    /// The banner at the top: the verdict and why, as of when, and how to see it fresh.
    func verdict(_ page: ConsolePages.Fleet) -> HTML {
        let verdict = page.verdict ?? FleetVerdict.of(page)
        let reasons = HTML.join(verdict.reasons.map { "<li>\($0)</li>" })
        return """
            <section class="verdict \(verdict.state)" aria-label="Verdict"><p class="state">\(verdict.state.capitalized)</p><ul>\(reasons)</ul>
            <p class="asof">As of \(times.absolute(page.asOf, seconds: true)) · reloads every \(Self.fleetRefreshSeconds) s · \(link("Refresh now", "/"))</p></section>
            """
    }

    /// The last hour per minute: pushes accepted and refused by kind and platform, start lateness, dead letters.
    func charts(_ page: ConsolePages.Fleet) -> HTML {
        guard let charts = page.charts else { return "" }
        let now = page.asOf
        func series(_ result: String) -> [ConsoleChart.Series] {
            let points = charts.pushes.filter { $0.result == result }
            let names = Set(points.map { "\($0.kind) \($0.platform)" }).sorted()
            return names.map { name in
                ConsoleChart.Series(name: name, values: ConsoleChart.buckets(points.filter { "\($0.kind) \($0.platform)" == name }
                    .map { ($0.minute, Double($0.count)) }, now: now))
            }
        }
        let lateness = ConsoleChart.Series(name: "start lateness", values: ConsoleChart.buckets(charts.startLateness.map { ($0.minute, $0.seconds) },
                                                                                                now: now, combine: max))
        let dead = ConsoleChart.Series(name: "dead letters", values: ConsoleChart.buckets(charts.deadLetters.map { ($0.minute, Double($0.count)) }, now: now))
        let figures = [
            ConsoleChart(title: "Pushes accepted per minute, by kind and platform", unit: "pushes", series: series("accepted")),
            ConsoleChart(title: "Pushes refused per minute, by kind and platform", unit: "pushes", series: series("refused")),
            ConsoleChart(title: "Longest start wait per minute (seconds from due to sent)", unit: "seconds", series: [lateness]),
            ConsoleChart(title: "Jobs that became dead letters per minute", unit: "dead letters", series: [dead]),
        ]
        return "<section class=\"charts\" aria-label=\"The last hour\">\(HTML.join(figures.map(\.svg)))</section>"
    }

    func stream(_ page: ConsolePages.Stream) -> HTTPResponse {
        let report = page.report
        let summary: HTML = """
            <dl><dt>Title</dt><dd>\(report.title)</dd><dt>Status</dt><dd>\(report.status)</dd>
            <dt>Planned start</dt><dd>\(time(report.plannedStartAt))</dd><dt>Start window opens</dt><dd>\(time(report.startWindowOpensAt))</dd></dl>
            """
        let cancel: HTML = StreamStatus(rawValue: report.status)?.isTerminal == false
            ? "<p>\(actionLink("Cancel this stream…", .cancelStream(report.id)))</p>" : ""
        let history = table("Planned start history", ["changed", "from", "to"], page.plannedStartHistory.map {
            [time($0.changedAt), time($0.from), time($0.to)]
        }, empty: "never rescheduled")
        let participants = table("Participants", ["user", "name", "role", "position"], report.participants.map {
            [userLink($0.userID), text($0.name), text($0.role), number($0.position)]
        })
        let ledger = Dictionary(report.ledger.map { ($0.deviceID, $0) }, uniquingKeysWith: { first, _ in first })
        let devices = table("Devices and the start decision for each", ["device", "user", "platform", "decision", "when"], report.devices.map { device in
            let row = ledger[device.deviceID]
            let decision = row.map { "\($0.status)" + ($0.reason.map { ": \($0)" } ?? "") }
                ?? (device.startEligibility == "eligible" ? "eligible, not decided yet" : "not eligible: \(device.startEligibility)")
            let reach: HTML = page.unreachable[device.deviceID].map {
                "<br><span class=\"warn\">cannot be reached now: token cleared \(time($0))</span>"
            } ?? ""
            return [deviceLink(device.deviceID), userLink(device.userID), text(device.platform), "\(decision)\(reach)", time(row?.sentAt ?? row?.updatedAt)]
        })
        let timeline = self.timeline(page.timeline, now: report.databaseNow)
        return self.page("Stream \(report.id)", "\(summary)\(cancel)\(history)\(participants)\(devices)\(channels(page.channels ?? []))\(timeline)")
    }

    /// The device page, its times in the device's own zone when it has a known one.
    /// The timeline as one table, oldest first, with a "now" row between what happened and what is planned.
    func timeline(_ entries: [ConsolePages.TimelineEntry], now: Date) -> HTML {
        func row(_ entry: ConsolePages.TimelineEntry) -> HTML {
            var who: [HTML] = []
            if let device = entry.deviceID { who.append("device \(deviceLink(device))") }
            if let user = entry.userID { who.append("user \(userLink(user))") }
            if let actor = entry.actor { who.append(text(actor)) }
            let state: HTML = entry.state.map { "<span class=\"state \($0)\">\($0)</span>" } ?? ""
            return "<tr><td>\(time(entry.at))</td><td>\(entry.event)</td><td>\(HTML.join(who, separator: ", "))</td><td>\(state)</td><td>\(entry.detail)</td></tr>"
        }
        let past = entries.filter { ($0.at ?? .distantFuture) <= now }
        let future = entries.filter { ($0.at ?? .distantFuture) > now && $0.at != nil }
        let undated = entries.filter { $0.at == nil }
        let nowRow: HTML = "<tr class=\"now\"><td colspan=\"5\">now · \(times.absolute(now, seconds: true))</td></tr>"
        let head = HTML.join(["when", "event", "who", "state", "detail"].map { "<th scope=\"col\">\($0)</th>" })
        let undatedRows: HTML = undated.isEmpty ? "" : "<tr class=\"now\"><td colspan=\"5\">not dated</td></tr>\(HTML.join(undated.map(row)))"
        return """
            <table class="timeline"><caption>Timeline: what happened, now, what is planned</caption><thead><tr>\(head)</tr></thead>
            <tbody>\(HTML.join(past.map(row)))\(nowRow)\(HTML.join(future.map(row)))\(undatedRows)</tbody></table>
            """
    }

    func device(_ page: ConsolePages.Device) -> HTTPResponse {
        guard let zone = page.device.timezone.flatMap(ConsoleTimes.zone(named:)) else { return devicePage(page, note: "") }
        var render = self
        render.times = times.inZone(zone)
        return render.devicePage(page, note: "<p class=\"note\">Times on this page are in the device's time zone, \(zone.identifier).</p>")
    }

    private func devicePage(_ page: ConsolePages.Device, note: HTML) -> HTTPResponse {
        let device = page.device
        let summary: HTML = """
            <dl><dt>User</dt><dd>\(userLink(device.userID))</dd><dt>Platform</dt><dd>\(device.platform)</dd>
            <dt>FCM token</dt><dd><code>\(device.fcmToken)</code></dd><dt>Push-to-start token</dt><dd><code>\(device.pushToStartToken)</code></dd>
            <dt>Locale, time zone</dt><dd>\(device.locale), \(device.timezone)</dd><dt>Updated</dt><dd>\(time(device.updatedAt))</dd></dl>
            """
        let decisions = table("Starts and skips", ["stream", "status", "reason", "attempts", "sent", "changed"], page.startDecisions.map {
            [streamLink($0.streamID), text($0.status), text($0.reason), number($0.attempts), time($0.sentAt), time($0.updatedAt)]
        })
        let sessions = table("Sessions", ["stream", "runtime token", "updated"], page.sessions.map {
            [streamLink($0.streamID), "<code>\($0.token)</code>", time($0.updatedAt)]
        })
        let cleared = table("Token invalidations", ["when", "token", "value", "reason", "stream", "restored"], page.invalidations.map {
            [time($0.invalidatedAt), text($0.token), "<code>\($0.value)</code>", text($0.reason), $0.streamID.map(streamLink) ?? "—", time($0.restoredAt)]
        })
        return self.page("Device \(device.deviceID)", "\(note)\(summary)\(decisions)\(sessions)\(cleared)")
    }

    func user(_ page: ConsolePages.User) -> HTTPResponse {
        let user = page.user
        let summary: HTML = """
            <dl><dt>Name</dt><dd>\(user.displayName)</dd><dt>Locale</dt><dd>\(user.locale)</dd>
            <dt>Live stream notifications</dt><dd>\(user.liveStreamEnabled ? "on" : "off (preference_off)")</dd></dl>
            """
        let devices = table("Devices", ["device", "platform", "FCM token", "push-to-start token", "updated"], page.devices.map {
            [deviceLink($0.deviceID), text($0.platform), "<code>\($0.fcmToken)</code>", "<code>\($0.pushToStartToken)</code>", time($0.updatedAt)]
        })
        let streams = table("Streams", ["stream", "title", "status", "planned start", "role"], page.streams.map {
            [streamLink($0.streamID), text($0.title), text($0.status), time($0.plannedStartAt), text($0.role)]
        })
        let reminders = table("Reminders", ["stream", "status"], page.reminders.map { [streamLink($0.streamID), text($0.status)] })
        return self.page("User \(user.id)", "\(summary)\(devices)\(streams)\(reminders)")
    }

    func dead(_ page: ConsolePages.Dead) -> HTTPResponse {
        let rows = page.deadLetters.map { letter -> [HTML] in
            [text(letter.id), text(letter.kind), number(letter.attempts), time(letter.deadAt), text(String(letter.lastError.prefix(300))),
             "\(actionLink("Retry…", .retryDead(letter.id))) \(actionLink("Drop…", .dropDead(letter.id)))"]
        }
        return self.page("Dead letters", table("Dead letters (at most \(page.limit))", ["job", "kind", "attempts", "dead since", "last error", "actions"], rows))
    }

    func quarantine(_ page: ConsolePages.Quarantine) -> HTTPResponse {
        let rows = page.entries.map { entry -> [HTML] in
            [text(entry.kind), text(entry.key), text(entry.foundBy), number(entry.seenCount), time(entry.firstSeenAt), time(entry.lastSeenAt),
             text(String(entry.reason.prefix(300))),
             "\(actionLink("Retry…", .retryQuarantine(entry.key))) \(actionLink("Drop…", .dropQuarantine(entry.key)))"]
        }
        return self.page("Quarantine", table("Quarantined rows", ["kind", "key", "found by", "seen", "first", "last", "reason", "actions"], rows))
    }

    func tokens(_ page: ConsolePages.Tokens) -> HTTPResponse {
        let filter: HTML = """
            <form method="get" action="/tokens"><label for="since">Since (RFC 3339 time or a duration ago: 90s, 15m, 2h)</label>
            <input type="text" id="since" name="since" value="\(page.since)"> <button type="submit">Show</button></form>
            """
        let restore: HTML = user?.mayAct == true
            ? "<p>\(link("Restore the tokens cleared since \(page.since)…", "/tokens/restore?since=" + ConsoleAction.segment(page.since)))</p>" : ""
        let rows = page.invalidations.map { entry -> [HTML] in
            [time(entry.invalidatedAt), deviceLink(entry.deviceID), text(entry.token), "<code>\(entry.value)</code>", text(entry.reason),
             entry.streamID.map(streamLink) ?? "—", time(entry.restoredAt)]
        }
        return self.page("Token invalidations", "\(filter)\(restore)\(table("Cleared tokens since \(page.since)", ["when", "device", "token", "value", "reason", "stream", "restored"], rows))")
    }

    /// The page an audit row's target is on.
    func auditTarget(_ entry: AuditQueries.Entry) -> HTML {
        let action = entry.action
        if action.hasPrefix("stream.") { return streamLink(entry.target) }
        if action.hasPrefix("dead.") { return link(entry.target, "/dead") }
        if action.hasPrefix("quarantine.") { return link(entry.target, "/quarantine") }
        if action == "tokens.restore", entry.target.hasPrefix("since ") {
            return link(entry.target, "/tokens?since=" + ConsoleAction.segment(String(entry.target.dropFirst("since ".count))))
        }
        if action == "pause" || action == "resume" { return link(entry.target, "/") }
        if action == "audit.limit" { return link(entry.target, "/audit") }
        return text(entry.target)
    }

    func audit(_ page: ConsolePages.Audit) -> HTTPResponse {
        let rows = page.entries.map { entry -> [HTML] in
            [time(entry.at), text(entry.actor), text(entry.role), text(entry.action), auditTarget(entry), text(entry.reason), text(entry.outcome)]
        }
        let more: HTML = page.nextBefore.map { "<p>\(link("Older entries", "/audit?before=\($0)"))</p>" } ?? ""
        return self.page("Audit", "\(table("Actions, newest first", ["when", "actor", "role", "action", "target", "reason", "outcome"], rows))\(more)")
    }

    func search(_ page: ConsolePages.Search) -> HTTPResponse {
        let rows = page.results.map { [text($0.kind), link($0.id, $0.path), text($0.label), text($0.how)] }
        let body: HTML = page.results.isEmpty
            ? "<p>Nothing found for <code>\(page.query)</code>: no stream, device or user id is or begins with it, no stream title or user name has it.</p>"
            : table("Found for “\(page.query)”", ["kind", "id", "title, name or platform", "matched by"], rows)
        return self.page("Search", status: page.results.isEmpty ? 404 : 200, body)
    }

    func streams(_ page: ConsolePages.Streams) -> HTTPResponse {
        let statuses = HTML.join(StreamStatus.allCases.map { status in
            "<option value=\"\(status.rawValue)\"\(status.rawValue == page.status ? HTML(stringLiteral: " selected") : "")>\(status.rawValue)</option>"
        })
        let filter: HTML = """
            <form class="choose" method="get" action="/streams"><label for="status">Status</label><select id="status" name="status">\(statuses)</select>
            <label for="starting">Planned within (a duration ahead: 90m, 24h, 7d; empty: any time)</label>
            <input type="text" id="starting" name="starting" value="\(page.starting ?? "")"> <button type="submit">Show</button></form>
            """
        let rows = page.streams.map { [streamLink($0.id), text($0.title), text($0.status), time($0.plannedStartAt), number($0.participants)] }
        let caption = "Streams \(page.status)" + (page.starting.map { ", planned within \($0)" } ?? "") + ", by planned start"
        var query = "status=\(ConsoleAction.segment(page.status))"
        if let starting = page.starting { query += "&starting=\(ConsoleAction.segment(starting))" }
        let next: HTML = page.nextAfter.map { "<p>\(link("Next \(ConsoleService.streamsPageLimit) streams", "/streams?\(query)&after=\(ConsoleAction.segment($0))"))</p>" } ?? ""
        let first: HTML = page.streams.isEmpty ? "" : "<p>\(link("First page", "/streams?\(query)"))</p>"
        return self.page("Streams", "\(filter)\(table(caption, ["stream", "title", "status", "planned start", "participants"], rows, empty: "none"))\(next)\(first)")
    }

    /// The confirmation of an action: the exact effect of what the form posts. What chooses the effect (a pause's
    /// kind, a restore's `since`) is changed with a `GET` form that shows the page again with its own count; the
    /// posting form carries it in a hidden field, so the count shown is for exactly what is posted.
    func confirmation(_ page: ConsoleService.Confirmation, action: ConsoleAction) -> HTTPResponse {
        let refused: HTML = page.count > page.bulkLimit
            ? "<p class=\"warn\">This touches \(page.count) items, more than \(page.bulkLimit): the console refuses it and does nothing.</p>" : ""
        var choose: HTML = ""
        var fields: HTML = ""
        switch action {
        case .pause(let kind), .resume(let kind):
            let options = HTML.join(([""] + CountdownJob.Kind.allCases.map(\.rawValue)).map { value in
                "<option value=\"\(value)\"\(value == (kind ?? "") ? HTML(stringLiteral: " selected") : "")>\(value.isEmpty ? "every kind" : value)</option>"
            })
            choose = """
                <form class="choose" method="get" action="\(page.path)"><label for="kind">Kind</label>
                <select id="kind" name="kind">\(options)</select> <button type="submit">Show the effect for this kind</button></form>
                """
            fields = "<input type=\"hidden\" name=\"kind\" value=\"\(kind ?? "")\">"
        case .restoreTokens(let since):
            choose = """
                <form class="choose" method="get" action="\(page.path)"><label for="since">Since (RFC 3339 time or a duration ago)</label>
                <input type="text" id="since" name="since" value="\(since)" required> <button type="submit">Count again</button></form>
                """
            fields = "<input type=\"hidden\" name=\"since\" value=\"\(since)\">"
        default: break
        }
        let counts: HTML = page.cancelCounts.map { counts in
            """
            <dl class="counts"><dt>Status now</dt><dd>\(counts.status)</dd><dt>Pending jobs removed</dt><dd>\(counts.pendingJobs)</dd>
            <dt>Active reminders cancelled</dt><dd>\(counts.activeReminders)</dd><dt>Live Activities sent an end</dt><dd>\(counts.sessions)</dd>
            <dt>Devices of the creator and guests</dt><dd>\(counts.devices)</dd></dl>
            """
        } ?? ""
        let form: HTML = user?.mayAct == true ? """
            <form class="action" method="post" action="\(page.path)">
            <input type="hidden" name="csrf_token" value="\(page.csrfToken)">\(fields)
            <label for="reason">Reason (required, kept in the audit)</label><textarea id="reason" name="reason" required maxlength="2000" rows="3"></textarea>
            <button type="submit">\(page.title)</button></form>
            """ : "<p class=\"warn\">Only operators may do this; you are a viewer.</p>"
        return self.page("\(page.title)?", "<p>\(page.effect)</p>\(counts)\(choose)\(refused)\(form)")
    }

    func result(_ result: ConsoleService.ActionResult, action: ConsoleAction) -> HTTPResponse {
        let target: HTML = if case .cancelStream(let id) = action { "<p>\(link("Back to stream \(id)", "/streams/" + ConsoleAction.segment(id)))</p>" } else { "" }
        return page("Done: \(result.title)", "<p>\(result.outcome)</p>\(target)<p>\(link("See the audit", "/audit")) · \(link("Fleet", "/"))</p>")
    }

    /// An error page with a way back: to the confirmation a refused form came from (`back`), and to the fleet.
    func error(_ error: ConsoleError, back: String? = nil) -> HTTPResponse {
        guard error.code != .unauthorized else {
            return HTTPResponse.text(bareError(error.message), status: error.code.status, contentType: "text/html; charset=utf-8")
        }
        let title = switch error.code {
        case .notFound: "Not found"
        case .forbidden: "Not allowed"
        case .rateLimited: "Too many actions"
        case .internalError: "Something went wrong"
        default: "Cannot do that"
        }
        let ways: HTML = back.map { "\(link("Back to the confirmation", $0)) · \(link("Fleet", "/"))" } ?? link("Fleet", "/")
        return page(title, status: error.code.status, "<p class=\"problem\">\(error.message)</p><p>\(ways)</p>")
    }

    /// A page without navigation, for requests that are not signed in: the stylesheet and a way to try again.
    func bareError(_ message: String) -> String {
        let document: HTML = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Not signed in · Countdown console</title><link rel="stylesheet" href="/console.css"></head>
            <body><main id="main"><h1>Not signed in</h1><p class="problem">\(message)</p>
            <p>Open the console through its sign-in proxy. \(link("Try again", "/"))</p></main></body></html>
            """
        return document.text
    }

    /// What an action does, with its count, in a sentence.
    static func effect(of action: ConsoleAction, count: Int, cancel: ConsolePages.CancelCounts? = nil) -> String {
        switch action {
        case .cancelStream(let id):
            if count == 0 {
                "There is no stream \(id)."
            } else if let cancel, cancel.ended {
                "Stream \(id) is \(cancel.status) already: cancelling it changes nothing."
            } else if let cancel {
                "Cancels stream \(id): its status becomes cancelled (it is \(cancel.status)), \(cancel.pendingJobs) pending job(s) are removed, "
                    + "\(cancel.activeReminders) active reminder(s) are cancelled and \(cancel.sessions) Live Activit(ies) get an end push."
            } else {
                "Cancels stream \(id): its status becomes cancelled, its pending jobs are removed, its active reminders are cancelled and every Live Activity gets an end push."
            }
        case .pause(let kind): "Stops the fleet claiming \(kind.map { "\($0) jobs" } ?? "every kind of job") within a second (\(count) kind(s)); the jobs stay due."
        case .resume(let kind): "Resumes \(kind ?? "every paused kind") (\(count) paused kind(s)); workers release the held jobs within a second."
        case .retryDead(let id): count == 0 ? "There is no dead letter \(id)." : "Puts dead letter \(id) back on the queue, due now (1 job)."
        case .dropDead(let id): count == 0 ? "There is no dead letter \(id)." : "Deletes dead letter \(id) (1 job); it cannot be retried afterwards."
        case .retryQuarantine(let key): count == 0 ? "Nothing is quarantined under \(key)." : "Reads and plans \(key) again (\(count) entry); it leaves the quarantine if it now reads."
        case .dropQuarantine(let key): count == 0 ? "Nothing is quarantined under \(key)." : "Removes \(key) from the quarantine (\(count) entry) without planning it."
        case .restoreTokens(let since): "Puts back \(count) token(s) cleared since \(since) on devices whose token has not changed since."
        }
    }
}
