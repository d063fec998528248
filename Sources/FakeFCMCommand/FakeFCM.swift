import BlockingIO
import Foundation
import HTTPServer
import JWT
import JSON

/// The fake's routes:
/// - `POST /token` (and the path of the account's `token_uri`): JWT-bearer grant → `{"access_token", "expires_in", "token_type"}`
///   or a Google OAuth error (`invalid_grant`, `invalid_scope`, `unsupported_grant_type`, `invalid_request`), 400;
/// - `POST /v1/projects/{project}/messages:send`: bearer, project and message checks → `{"name"}` or an FCM v1 error;
/// - `GET /fake/messages[?since=<seq>&limit=<n>&token=<t>&event=<e>]` (`event=android_` for every Android countdown message), `DELETE /fake/messages`: accepted messages, reset;
/// - `GET /fake/stats`: counts by event, HTTP status and error code, drops, token grants;
/// - `GET /fake/requests[?kind=token|send]`, `DELETE /fake/requests`: the newest token requests and sends as
///   received (headers, body) with the answers given, reset;
/// - `DELETE /fake/tokens`: revokes every access token issued so far (the next send with one gets 401);
/// - `GET|POST|DELETE /fake/faults`: show, add (`FaultRule`, one or an array), clear injected faults (sends and
///   token requests);
/// - `GET /healthz`.
struct FakeFCM: Sendable {
    let account: ServiceAccount
    let assertions: AssertionChecker
    let tokens: AccessTokenStore
    let faults: FaultInjector
    let messages: MessageLog
    let requests: RequestLog
    let log: FakeLog
    private let now: @Sendable () -> Date
    /// Holds sends back by the injected latency (one thread, not a timer per send).
    let delays = DelayLine(name: "fake-latency")

    init(account: ServiceAccount, tokenLifetime: Int, keep: Int, keepRequests: Int, recordFile: RecordFile?, log: FakeLog,
         now: @escaping @Sendable () -> Date = { Date() }) throws(UsageError) {
        self.account = account
        assertions = try AssertionChecker(account: account, now: now)
        tokens = AccessTokenStore(lifetime: tokenLifetime, now: now)
        faults = FaultInjector(now: now)
        messages = MessageLog(capacity: keep, recordFile: recordFile, now: now)
        requests = RequestLog(capacity: keepRequests)
        self.log = log
        self.now = now
    }

    /// Paths answered by the token endpoint: `/token` and the path of the account's `token_uri`.
    var tokenPaths: Set<String> { ["/token", account.tokenPath] }

    /// Answers on the server thread, except a send or token request under an injected latency: that one is
    /// answered by the latency line's thread when the latency is over (no task, no hop through the Swift pool: the
    /// fake's CPU is the benchmarks' too). Sends and token requests are recorded with their answers.
    func respond(to request: HTTPRequest, with answer: HTTPResponder) {
        let kind: RequestLog.Kind
        let latency: Int
        let answerNow: @Sendable () -> HTTPResponse
        if let project = Self.sendProject(in: request.path), request.method == "POST" {
            (kind, latency) = (.send, faults.latencyMilliseconds)
            answerNow = { [self] in send(request, project: project) }
        } else if tokenPaths.contains(request.path), request.method == "POST" {
            (kind, latency) = (.token, faults.tokenLatencyMilliseconds)
            answerNow = { [self] in issueToken(request) }
        } else {
            answer(respond(to: request))
            return
        }
        let recorded: @Sendable () -> Void = { [requests] in
            let response = answerNow()
            requests.record(kind, request, response)
            answer(response)
        }
        if latency > 0 {
            delays.schedule(after: .milliseconds(latency), recorded)
        } else {
            recorded()
        }
    }

    func respond(to request: HTTPRequest) -> HTTPResponse {
        if let project = Self.sendProject(in: request.path) {
            guard request.method == "POST" else { return .methodNotAllowed(allowed: ["POST"]) }
            return send(request, project: project)
        }
        if tokenPaths.contains(request.path) {
            guard request.method == "POST" else { return .methodNotAllowed(allowed: ["POST"]) }
            return issueToken(request)
        }
        switch (request.method, request.path) {
        case ("GET", "/healthz"): return .text("ok\n")
        case ("GET", "/fake/messages"): return listMessages(request)
        case ("DELETE", "/fake/messages"):
            messages.reset()
            log.info("messages and stats reset")
            return .empty()
        case ("GET", "/fake/stats"): return Self.json(messages.stats)
        case ("GET", "/fake/requests"): return listRequests(request)
        case ("DELETE", "/fake/requests"):
            requests.reset()
            return .empty()
        case ("DELETE", "/fake/tokens"):
            tokens.revokeAll()
            log.info("access tokens revoked")
            return .empty()
        case ("GET", "/fake/faults"): return Self.json(faults.snapshot)
        case ("POST", "/fake/faults"): return addFaults(request)
        case ("DELETE", "/fake/faults"):
            faults.clear()
            log.info("faults cleared")
            return .empty()
        case (_, "/healthz"), (_, "/fake/stats"): return .methodNotAllowed(allowed: ["GET"])
        case (_, "/fake/messages"), (_, "/fake/faults"): return .methodNotAllowed(allowed: ["GET", "POST", "DELETE"])
        case (_, "/fake/requests"): return .methodNotAllowed(allowed: ["GET", "DELETE"])
        case (_, "/fake/tokens"): return .methodNotAllowed(allowed: ["DELETE"])
        default: return .json(object: ["error": "no route for \(request.method) \(request.path)"], status: 404)
        }
    }

    /// `{project}` of `/v1/projects/{project}/messages:send`.
    static func sendProject(in path: String) -> String? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0].isEmpty, parts[1] == "v1", parts[2] == "projects", !parts[3].isEmpty, parts[4] == "messages:send" else {
            return nil
        }
        return String(parts[3])
    }

    private func issueToken(_ request: HTTPRequest) -> HTTPResponse {
        if let failure = faults.tokenFailure() {
            messages.countToken(issued: false)
            log.info("token request failed by fault", ["status": String(failure.status), "error": failure.errorCode ?? ""])
            return GoogleErrorBody.oauth(failure.errorCode ?? "invalid_grant", failure.message, status: failure.status)
        }
        let form = request.formFields()
        let field = { (name: String) in form.first { $0.name == name }?.value }
        do throws(AssertionChecker.Refusal) {
            try assertions.check(grantType: field("grant_type"), assertion: field("assertion"))
        } catch {
            messages.countToken(issued: false)
            log.info("token request refused", ["error": error.error, "reason": error.description])
            return GoogleErrorBody.oauth(error.error, error.description)
        }
        messages.countToken(issued: true)
        log.debug("access token issued", ["expiresIn": String(tokens.lifetime)])
        var response = HTTPResponse.json(object: ["access_token": tokens.issue(), "expires_in": tokens.lifetime, "token_type": "Bearer"])
        response.headers["Cache-Control"] = "no-store"
        return response
    }

    /// A send once its latency is over.
    private func send(_ request: HTTPRequest, project: String) -> HTTPResponse {
        if faults.takeDrop() {
            messages.countDropped()
            log.debug("send dropped by fault")
            return .dropConnection
        }
        if let refusal = authenticate(request) { return reject(refusal, status: 401, errorCode: nil) }
        guard project == account.projectID else {
            return reject(
                "Permission 'cloudmessaging.messages.create' denied on resource '//cloudresourcemanager.googleapis.com/projects/\(project)' (or it may not exist).",
                status: 403, errorCode: nil)
        }
        let message: ValidatedMessage
        do throws(GoogleErrorBody.FieldViolation) {
            message = try MessageValidator.validate(request.body)
        } catch {
            messages.reject(status: 400, errorCode: "INVALID_ARGUMENT")
            log.debug("send refused: invalid message", ["field": error.field, "reason": error.description])
            return GoogleErrorBody.invalidArgument(error)
        }
        let tokens = [message.token] + (message.liveActivityToken.map { [$0] } ?? [])
        if let failure = faults.failure(tokens: tokens) {
            messages.reject(status: failure.status, errorCode: failure.errorCode)
            log.debug("send failed by fault", ["status": String(failure.status), "token": FakeLog.redact(message.token)])
            return GoogleErrorBody.fcm(
                status: failure.status, errorCode: failure.errorCode, message: failure.message,
                violation: failure.violationField.map { GoogleErrorBody.FieldViolation(field: $0, description: failure.message) },
                retryAfter: failure.retryAfterHeader(now: now()))
        }
        if message.validateOnly {
            messages.countValidatedOnly()
            return .json(object: ["name": "projects/\(project)/messages/fake_message_id"])
        }
        let name = messages.accept(message, body: request.body, project: project)
        log.debug("message accepted", ["event": message.event, "token": FakeLog.redact(message.token), "name": name])
        return .jsonBody(Data("{\"name\":\(JSONString.quoted(name))}".utf8))
    }

    /// nil when the request carries a live access token, else the 401 message.
    private func authenticate(_ request: HTTPRequest) -> String? {
        guard let header = request.headers["Authorization"], header.hasPrefix("Bearer "), header.count > 7 else {
            return "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential."
        }
        guard tokens.isValid(String(header.dropFirst(7))) else {
            return GoogleErrorBody.defaultMessage(status: 401, errorCode: nil)
        }
        return nil
    }

    private func reject(_ message: String, status: Int, errorCode: String?) -> HTTPResponse {
        messages.reject(status: status, errorCode: errorCode)
        log.debug("send refused", ["status": String(status), "reason": message])
        return GoogleErrorBody.fcm(status: status, errorCode: errorCode, message: message)
    }

    private func listMessages(_ request: HTTPRequest) -> HTTPResponse {
        var since = 0
        var limit = Int.max
        for (name, text) in [("since", request.queryValue("since")), ("limit", request.queryValue("limit"))] {
            guard let text else { continue }
            guard let value = Int(text), value >= 0 else {
                return .json(object: ["error": "\(name) must be a non-negative integer"], status: 400)
            }
            if name == "since" { since = value } else { limit = value }
        }
        return Self.json(messages.messages(since: since, limit: limit, token: request.queryValue("token"), event: request.queryValue("event")))
    }

    private func listRequests(_ request: HTTPRequest) -> HTTPResponse {
        var kind: RequestLog.Kind?
        if let text = request.queryValue("kind") {
            guard let parsed = RequestLog.Kind(rawValue: text), parsed == .token || parsed == .send else {
                return .json(object: ["error": "kind must be token or send"], status: 400)
            }
            kind = parsed
        }
        return Self.json(requests.entries(kind: kind))
    }

    private func addFaults(_ request: HTTPRequest) -> HTTPResponse {
        FaultRuleBody.add(request.body, apply: faults.apply) { (rules: [FaultRule]) in
            let snapshot = faults.snapshot
            log.info("faults added", [
                "rules": String(rules.count), "latencyMs": String(snapshot.latencyMs), "dropConnections": String(snapshot.dropConnections),
                "failures": String(snapshot.failures.count),
            ])
            return Self.json(snapshot)
        }
    }

    private static func json<T: Encodable>(_ value: T) -> HTTPResponse {
        let encoder = HTTPResponse.jsonEncoder
        encoder.dateEncodingStrategy = .secondsSince1970
        return .json(value, encoder: encoder)
    }
}
