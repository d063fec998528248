import CountdownDomain
import CountdownMaintenance
import CountdownStore
import Foundation
import HTTPServer

/// Server-rendered pages: one layout (skip link, navigation, search box, one `h1`, `main`), tables with captions
/// and column headers, forms with labels. Every value goes through `HTML`'s escaping interpolation.
struct ConsoleRender {
    let user: ConsoleUser?

    func page(_ title: String, status: Int = 200, _ body: HTML) -> HTTPResponse {
        let signedIn: HTML = user.map { "<p>Signed in as <strong>\($0.name)</strong> (\($0.role.rawValue))</p>" } ?? ""
        let document: HTML = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(title) · Countdown console</title><link rel="stylesheet" href="/console.css"></head>
            <body><a class="skip" href="#main">Skip to content</a>
            <header><nav aria-label="Console"><ul>
            <li><a href="/">Fleet</a></li><li><a href="/dead">Dead letters</a></li><li><a href="/quarantine">Quarantine</a></li>
            <li><a href="/tokens">Token invalidations</a></li><li><a href="/audit">Audit</a></li></ul></nav>
            <form role="search" method="get" action="/search"><label for="q">Stream, device or user id</label>
            <input type="search" id="q" name="q" required maxlength="256"> <button type="submit">Search</button></form>
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
    func time(_ date: Date?) -> HTML { "\(RFC3339Text.format(date))" }
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
        let results = table("Start decisions in the last hour", ["result", "count"], stats.recentStartResults.sorted { $0.key < $1.key }.map {
            [text($0.key), number($0.value)]
        }, empty: "no start decisions in the last hour")
        let other = table("PostgreSQL", ["quarantined rows", "outbox backlog", "oldest outbox row", "reminders sent (last hour)"], [[
            link(String(page.quarantined), "/quarantine"), number(stats.outboxBacklog), text(String(format: "%.1f s", stats.outboxOldestAgeSeconds)),
            number(stats.remindersSentLastHour),
        ]])
        let streams = table("Streams by status", ["status", "streams"], stats.streamsByStatus.sorted { $0.key < $1.key }.map { [text($0.key), number($0.value)] })
        return self.page("Fleet", "\(queue)\(kinds)\(paused)\(pauseLinks)\(workers)\(guardLine)\(results)\(other)\(streams)")
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
            return [deviceLink(device.deviceID), userLink(device.userID), text(device.platform), text(decision), time(row?.sentAt ?? row?.updatedAt)]
        })
        let timeline = table("Timeline", ["when", "event", "device", "detail"], page.timeline.map {
            [time($0.at), text($0.event), deviceLink($0.deviceID), text($0.detail)]
        })
        return self.page("Stream \(report.id)", "\(summary)\(cancel)\(history)\(participants)\(devices)\(timeline)")
    }

    func device(_ page: ConsolePages.Device) -> HTTPResponse {
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
        return self.page("Device \(device.deviceID)", "\(summary)\(decisions)\(sessions)\(cleared)")
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

    func audit(_ page: ConsolePages.Audit) -> HTTPResponse {
        let rows = page.entries.map { entry -> [HTML] in
            [time(entry.at), text(entry.actor), text(entry.role), text(entry.action), text(entry.target), text(entry.reason), text(entry.outcome)]
        }
        let more: HTML = page.nextBefore.map { "<p>\(link("Older entries", "/audit?before=\($0)"))</p>" } ?? ""
        return self.page("Audit", "\(table("Actions, newest first", ["when", "actor", "role", "action", "target", "reason", "outcome"], rows))\(more)")
    }

    func search(_ page: ConsolePages.Search) -> HTTPResponse {
        let items = HTML.join(page.matches.sorted { $0.key < $1.key }.map { "<li>\(link("\($0.key) \(page.query)", $0.value))</li>" })
        let body: HTML = page.matches.isEmpty ? "<p>No stream, device or user has the id <code>\(page.query)</code>.</p>" : "<ul>\(items)</ul>"
        return self.page("Search", status: page.matches.isEmpty ? 404 : 200, body)
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
        case .internalError, .unavailable: "Something went wrong"
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
