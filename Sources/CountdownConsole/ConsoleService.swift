import CountdownDomain
import CountdownStore
import Foundation
import HTTPServer
import Telemetry

/// Answers every console request: authenticates it, reads the page (HTML, or JSON for `Accept: application/json`),
/// or does an operator action after its checks (role, CSRF token, reason, bulk limit), writing an audit row and a
/// log line for every action allowed or refused.
public final class ConsoleService: Sendable {
    let backend: ConsoleBackend
    let authenticator: ConsoleAuthenticator
    let csrf: CSRFTokens
    let metrics: ConsoleMetrics
    let logger: Logger
    let auditLimiter: AuditLimiter

    public init(backend: ConsoleBackend, authenticator: ConsoleAuthenticator, csrf: CSRFTokens, metrics: ConsoleMetrics, logger: Logger,
                auditLimiter: AuditLimiter = AuditLimiter()) {
        self.backend = backend
        self.authenticator = authenticator
        self.csrf = csrf
        self.metrics = metrics
        self.logger = logger
        self.auditLimiter = auditLimiter
    }

    /// Rows the list pages show at most.
    static let pageLimit = 200
    /// Streams per page of `/streams`.
    static let streamsPageLimit = 50

    /// The viewer's way of showing times: the `tz` query parameter, else the zone cookie, else UTC.
    static func times(of request: HTTPRequest, now: Date = Date()) throws -> ConsoleTimes {
        if let name = request.queryValue("tz"), !name.isEmpty {
            guard let zone = ConsoleTimes.zone(named: name) else {
                throw ConsoleError(.badRequest, "tz must be UTC or a time zone name such as Europe/Istanbul")
            }
            return ConsoleTimes(now: now, zone: zone)
        }
        let zone = cookie(ConsoleTimes.cookie, of: request).flatMap { $0.removingPercentEncoding }.flatMap(ConsoleTimes.zone(named:))
        return ConsoleTimes(now: now, zone: zone ?? ConsoleTimes.utc)
    }

    /// The request's path and query, less the parameter `name`.
    static func pathAndQuery(_ request: HTTPRequest, without name: String) -> String {
        let pairs = request.query.filter { $0.name != name }.map { "\(ConsoleAction.segment($0.name))=\(ConsoleAction.segment($0.value ?? ""))" }
        return pairs.isEmpty ? request.path : request.path + "?" + pairs.joined(separator: "&")
    }

    /// The value of cookie `name`, if the request has it.
    static func cookie(_ name: String, of request: HTTPRequest) -> String? {
        for header in request.headers.values("Cookie") {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name { return String(parts[1]).trimmingCharacters(in: .whitespaces) }
            }
        }
        return nil
    }

    /// `/zone?tz=Europe/Istanbul&back=/streams/s1`: keeps the zone in a cookie and goes back (to a path of the console only).
    static func chooseZone(_ request: HTTPRequest) throws -> HTTPResponse {
        let name = request.queryValue("tz") ?? ""
        guard ConsoleTimes.zone(named: name) != nil else { throw ConsoleError(.badRequest, "tz must be UTC or a time zone name such as Europe/Istanbul") }
        let back = request.queryValue("back") ?? "/"
        var response = HTTPResponse(status: 303)
        response.headers["Location"] = back.hasPrefix("/") && !back.hasPrefix("//") && !back.contains("\\") ? back : "/"
        response.headers["Set-Cookie"] = "\(ConsoleTimes.cookie)=\(ConsoleAction.segment(name)); Path=/; Max-Age=31536000; SameSite=Strict; HttpOnly"
        return response
    }

    /// The `Content-Security-Policy` of every answer: nothing but the console's own stylesheet and forms.
    public static let contentSecurityPolicy =
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    public func respond(to request: HTTPRequest) async -> HTTPResponse {
        let started = ContinuousClock.now
        let page = Self.pageLabel(request.path)
        var response = await answer(request)
        response.headers["Content-Security-Policy"] = Self.contentSecurityPolicy
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["Cache-Control"] = "no-store"
        metrics.record(page: page, status: response.status, duration: ContinuousClock.now - started)
        return response
    }

    /// `/metrics` for the metrics listener.
    public func metricsResponse() -> HTTPResponse {
        .text(metrics.registry.render(), contentType: MetricsRegistry.contentType)
    }

    private func answer(_ request: HTTPRequest) async -> HTTPResponse {
        let json = Self.wantsJSON(request)
        if request.path == "/console.css" { return .text(ConsoleStyle.css, contentType: "text/css; charset=utf-8") }
        let user: ConsoleUser
        do {
            user = try authenticator.user(of: request)
        } catch {
            logger.warn("console request refused", ["path": .string(request.path), "peer": .string(request.remoteAddress),
                                                     "problem": .string(error.message)])
            return errorResponse(error, json: json, user: nil, back: nil)
        }
        let back = request.method == "POST" ? Self.confirmationURL(of: request) : nil
        do {
            switch request.method {
            case "GET", "HEAD": return try await get(request, user: user, json: json)
            case "POST": return try await post(request, user: user, json: json)
            default: throw ConsoleError(.methodNotAllowed, "the console answers GET and POST only")
            }
        } catch let error as ConsoleError {
            return errorResponse(error, json: json, user: user, back: back)
        } catch {
            logger.error("console request failed", ["path": .string(request.path), "error": .error(error)])
            return errorResponse(ConsoleError(.internalError, "the request failed; the log has the details"), json: json, user: user, back: back)
        }
    }

    private func get(_ request: HTTPRequest, user: ConsoleUser, json: Bool) async throws -> HTTPResponse {
        let path = request.path
        if let action = ConsoleAction.parse(path: path, field: request.queryValue) {
            return try await confirmation(action, user: user, json: json, times: try Self.times(of: request))
        }
        let times = try Self.times(of: request)
        var render = ConsoleRender(user: user, times: times, path: Self.pathAndQuery(request, without: "tz"))
        switch path {
        case "/":
            let page = try await backend.fleet()
            return json ? Self.json(page) : render.fleet(page)
        case "/zone":
            return try Self.chooseZone(request)
        case "/search":
            let query = (request.queryValue("q") ?? "").trimmingCharacters(in: .whitespaces)
            render.query = query
            guard !query.isEmpty, query.count <= 256 else {
                throw ConsoleError(.badRequest, "give an id, an id's beginning, a stream title or a user's name (at most 256 characters)")
            }
            let page = try await backend.search(query)
            // One thing with that very id, or one thing found at all, opens at once.
            let only = page.matches.count == 1 ? page.matches.values.first : (page.results.count == 1 ? page.results.first?.path : nil)
            if !json, let target = only {
                var response = HTTPResponse(status: 303)
                response.headers["Location"] = target
                return response
            }
            return json ? Self.json(page) : render.search(page)
        case "/streams":
            let page = try await backend.streams(status: request.queryValue("status") ?? StreamStatus.scheduled.rawValue,
                                                 starting: request.queryValue("starting").flatMap { $0.isEmpty ? nil : $0 },
                                                 after: request.queryValue("after").flatMap { $0.isEmpty ? nil : $0 }, limit: Self.streamsPageLimit)
            return json ? Self.json(page) : render.streams(page)
        case "/dead":
            let page = try await backend.dead(limit: Self.pageLimit)
            return json ? Self.json(page) : render.dead(page)
        case "/quarantine":
            let page = try await backend.quarantine()
            return json ? Self.json(page) : render.quarantine(page)
        case "/tokens":
            let page = try await backend.tokens(since: request.queryValue("since") ?? "24h")
            return json ? Self.json(page) : render.tokens(page)
        case "/audit":
            let page = try await backend.audit(limit: Self.pageLimit, before: request.queryValue("before").flatMap { Int($0) })
            return json ? Self.json(page) : render.audit(page)
        default:
            if let id = Self.id(path, under: "/streams/") {
                guard let page = try await backend.stream(id) else { throw ConsoleError(.notFound, "no stream \(id)") }
                return json ? Self.json(page) : render.stream(page)
            }
            if let id = Self.id(path, under: "/devices/") {
                guard let page = try await backend.device(id) else { throw ConsoleError(.notFound, "no device \(id)") }
                return json ? Self.json(page) : render.device(page)
            }
            if let id = Self.id(path, under: "/users/") {
                guard let page = try await backend.user(id) else { throw ConsoleError(.notFound, "no user \(id)") }
                return json ? Self.json(page) : render.user(page)
            }
            throw ConsoleError(.notFound, "no page at \(path)")
        }
    }

    /// What the confirmation page of an action shows, and what its JSON holds.
    public struct Confirmation: Sendable, Codable {
        public var action: String
        /// The action in words, e.g. "Cancel stream s1".
        public var title: String
        /// What a cancel would touch now (pending jobs, active reminders, sessions to end, devices), nil for others.
        public var cancelCounts: ConsolePages.CancelCounts?
        public var target: String
        public var path: String
        public var effect: String
        public var count: Int
        public var bulkLimit: Int
        public var csrfToken: String
    }

    private func confirmation(_ action: ConsoleAction, user: ConsoleUser, json: Bool, times: ConsoleTimes) async throws -> HTTPResponse {
        try Self.validate(action)
        let count = try await backend.count(action)
        if action.needsItsTarget, count == 0 { throw ConsoleError(.notFound, ConsoleRender.effect(of: action, count: count)) }
        var cancelCounts: ConsolePages.CancelCounts?
        if case .cancelStream(let id) = action { cancelCounts = try await backend.cancelCounts(id) }
        let page = Confirmation(action: action.name, title: action.title, cancelCounts: cancelCounts, target: action.target, path: action.path,
                                effect: ConsoleRender.effect(of: action, count: count, cancel: cancelCounts),
                                count: count, bulkLimit: ConsoleAction.bulkLimit, csrfToken: user.mayAct ? csrf.issue(for: user.name) : "")
        return json ? Self.json(page) : ConsoleRender(user: user, times: times).confirmation(page, action: action)
    }

    /// The result of an action.
    public struct ActionResult: Sendable, Codable {
        public var action: String
        public var title: String
        public var target: String
        public var outcome: String
    }

    private func post(_ request: HTTPRequest, user: ConsoleUser, json: Bool) async throws -> HTTPResponse {
        let fields = request.formFields()
        func field(_ name: String) -> String? { fields.first { $0.name == name }?.value }
        guard let action = ConsoleAction.parse(path: request.path, field: field) else {
            throw ConsoleError(.notFound, "no action at \(request.path)")
        }
        try await admitAudited(user)
        let reason = (field("reason") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        func refuse(_ code: ConsoleError.Code, _ why: String) async throws -> Never {
            try await record(action, user: user, reason: reason, outcome: "refused: \(why)")
            throw ConsoleError(code, why)
        }
        guard user.mayAct else { try await refuse(.forbidden, "\(user.name) is a viewer; only operators may act") }
        guard csrf.isValid(field("csrf_token"), for: user.name) else {
            try await refuse(.forbidden, "the form's csrf_token is missing or wrong; open the confirmation page again")
        }
        guard !reason.isEmpty, reason.count <= 2000 else { try await refuse(.badRequest, "a reason is required (at most 2,000 characters)") }
        do { try Self.validate(action) } catch let error as ConsoleError { try await refuse(error.code, error.message) }
        let count: Int
        do { count = try await backend.count(action) } catch let error as ConsoleError { try await refuse(error.code, error.message) }
        guard count <= ConsoleAction.bulkLimit else {
            try await refuse(.tooMany, "\(count) items, more than \(ConsoleAction.bulkLimit): refused, nothing done")
        }
        if action.needsItsTarget, count == 0 { try await refuse(.notFound, "nothing to act on: \(action.target) is not there") }
        // The row is written before the action and completed after it: no action is done without its audit row.
        let row = try await backend.audit(entry(action, user: user, reason: reason, outcome: Self.startedOutcome))
        let summary: String
        do {
            summary = try await backend.perform(action, actor: user.name, reason: reason)
        } catch let error as ConsoleError {
            await complete(row, action, user: user, reason: reason, outcome: "refused: \(error.message)")
            throw error
        } catch {
            await complete(row, action, user: user, reason: reason, outcome: "failed: \(error)")
            throw error
        }
        let outcome = "done: \(summary)"
        guard await complete(row, action, user: user, reason: reason, outcome: outcome) else {
            throw ConsoleError(.internalError, "\(outcome); but its audit row could not be completed (it says started); the log has the details")
        }
        let result = ActionResult(action: action.name, title: action.title, target: action.target, outcome: outcome)
        return json ? Self.json(result) : ConsoleRender(user: user).result(result, action: action)
    }

    /// The outcome of an audit row written before its action.
    static let startedOutcome = "started: not completed (the console stopped before it recorded the end)"

    /// Lets an audited request of `user` through, or refuses it past `auditLimiter`'s limit: counted in the metric
    /// and summed in the user's one summary row of the minute.
    private func admitAudited(_ user: ConsoleUser) async throws {
        guard case .refuse(let count, let insertSummary, let summaryRow) = auditLimiter.decide(for: user.name) else { return }
        metrics.auditLimited.increment()
        func summary(_ count: Int) -> String {
            "refused: \(count) action(s) past the limit of \(auditLimiter.perMinute) a minute, not done "
                + "(minute from \(auditLimiter.minuteLabel()) UTC)"
        }
        if insertSummary {
            logger.warn("console audit limit", ["actor": .string(user.name), "perMinute": .int(auditLimiter.perMinute)])
            let row = try await backend.audit(AuditQueries.Entry(actor: user.name, role: user.role.rawValue, action: "audit.limit",
                                                               target: user.name, reason: "", outcome: summary(count)))
            auditLimiter.summaryWritten(for: user.name, row: row)
        } else if let summaryRow {
            try await backend.setAuditOutcome(summary(auditLimiter.refusals(of: user.name)), ofRow: summaryRow)
        }
        throw ConsoleError(.rateLimited, "more than \(auditLimiter.perMinute) actions in a minute from \(user.name): refused, nothing done; "
            + "try again next minute")
    }

    private func entry(_ action: ConsoleAction, user: ConsoleUser, reason: String, outcome: String) -> AuditQueries.Entry {
        AuditQueries.Entry(actor: user.name, role: user.role.rawValue, action: action.name, target: action.target, reason: reason, outcome: outcome)
    }

    /// Writes the audit row, the log line and the metric of an action refused before it started.
    private func record(_ action: ConsoleAction, user: ConsoleUser, reason: String, outcome: String) async throws {
        logAndCount(action, user: user, reason: reason, outcome: outcome)
        try await backend.audit(entry(action, user: user, reason: reason, outcome: outcome))
    }

    /// Completes the audit row `row` of an action, with its log line and metric; false (logged) when the row could
    /// not be updated.
    @discardableResult
    private func complete(_ row: Int, _ action: ConsoleAction, user: ConsoleUser, reason: String, outcome: String) async -> Bool {
        logAndCount(action, user: user, reason: reason, outcome: outcome)
        do {
            try await backend.setAuditOutcome(outcome, ofRow: row)
            return true
        } catch {
            logger.error("console audit row not completed", ["row": .int(row), "action": .string(action.name), "error": .error(error)])
            return false
        }
    }

    private func logAndCount(_ action: ConsoleAction, user: ConsoleUser, reason: String, outcome: String) {
        let fields: [String: LogValue] = [
            "action": .string(action.name), "target": .string(action.target), "actor": .string(user.name),
            "role": .string(user.role.rawValue), "reason": .string(reason), "outcome": .string(outcome),
        ]
        if outcome.hasPrefix("done") { logger.info("console action", fields) } else { logger.warn("console action", fields) }
        metrics.actions.increment(labels: action.name, String(outcome.prefix { $0 != ":" }))
    }

    /// Kinds must be job kinds; `since` must parse.
    static func validate(_ action: ConsoleAction) throws {
        switch action {
        case .pause(let kind?), .resume(let kind?):
            guard CountdownJob.Kind(rawValue: kind) != nil else {
                throw ConsoleError(.badRequest, "kind must be empty (every kind) or one of \(CountdownJob.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
        case .restoreTokens(let since): _ = try ConsoleBackend.since(since)
        default: break
        }
    }

    /// The confirmation page of the action a form posted to, for an error page's way back.
    static func confirmationURL(of request: HTTPRequest) -> String? {
        let fields = request.formFields()
        return ConsoleAction.parse(path: request.path) { name in fields.first { $0.name == name }?.value }?.confirmationURL
    }

    private func errorResponse(_ error: ConsoleError, json: Bool, user: ConsoleUser?, back: String?) -> HTTPResponse {
        if json {
            struct Body: Encodable { var error: String; var message: String }
            var response = Self.json(Body(error: error.code.rawValue, message: error.message), status: error.code.status)
            if error.code == .unauthorized, case .jwt = authenticator.mode { response.headers["WWW-Authenticate"] = "Bearer" }
            return response
        }
        return ConsoleRender(user: user).error(error, back: back)
    }

    static func wantsJSON(_ request: HTTPRequest) -> Bool {
        (request.headers["Accept"] ?? "").lowercased().contains("application/json")
    }

    /// The id after `prefix` when it is the whole rest of the path.
    static func id(_ path: String, under prefix: String) -> String? {
        guard path.hasPrefix(prefix), path.count > prefix.count else { return nil }
        return String(path.dropFirst(prefix.count))
    }

    /// A bounded label for metrics: the page's first path segment.
    static func pageLabel(_ path: String) -> String {
        let first = path.split(separator: "/").first.map(String.init) ?? ""
        return ["", "search", "streams", "devices", "users", "dead", "quarantine", "tokens", "audit", "pause", "resume", "zone", "console.css"]
            .contains(first) ? (first.isEmpty ? "fleet" : first) : "other"
    }

    /// Sorted keys, RFC 3339 times.
    static var encoder: JSONEncoder {
        let encoder = HTTPResponse.jsonEncoder
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    static func json<T: Encodable>(_ value: T, status: Int = 200) -> HTTPResponse {
        HTTPResponse.json(value, status: status, encoder: encoder)
    }
}
