import BlockingIO
import Foundation
import HTTPServer
import JWT
import JSON

/// The fake's routes (and those every fake has, `FakeControl`):
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
struct FakeFCM: FakeControl {
    let account: ServiceAccount
    let assertions: AssertionChecker
    let tokens: AccessTokenStore
    let faults: FaultInjector
    let messages: MessageLog
    let requests: RequestLog
    let log: FakeLog
    private let now: @Sendable () -> Date
    let delays = DelayLine(name: "fake-latency")

    static let requestKinds: [RequestLog.Kind] = [.token, .send]
    static let routeMethods = [
        "/healthz": ["GET"], "/fake/stats": ["GET"], "/fake/messages": ["GET", "POST", "DELETE"], "/fake/faults": ["GET", "POST", "DELETE"],
        "/fake/requests": ["GET", "DELETE"], "/fake/tokens": ["DELETE"],
    ]

    init(account: ServiceAccount, tokenLifetime: Int, keep: Int, keepRequests: Int, recordFile: RecordFile?, log: FakeLog,
         now: @escaping @Sendable () -> Date = { Date() }) throws(UsageError) {
        self.account = account
        assertions = try AssertionChecker(account: account, now: now)
        tokens = AccessTokenStore(lifetime: tokenLifetime, now: now)
        faults = FaultInjector(service: .fcm, now: now)
        messages = MessageLog(capacity: keep, recordFile: recordFile, now: now)
        requests = RequestLog(capacity: keepRequests)
        self.log = log
        self.now = now
    }

    /// The fake of `options`, ready to serve.
    static func served(_ options: FakeOptions, log: FakeLog, recordFile: RecordFile?) throws(UsageError) -> FakeServer.Served {
        let account: ServiceAccount
        do { account = try ServiceAccount.load(file: options.serviceAccountPath) } catch { throw UsageError("service account: \(error)") }
        let fake = try FakeFCM(
            account: account, tokenLifetime: options.tokenLifetime, keep: options.keep, keepRequests: options.keepRequests, recordFile: recordFile, log: log)
        return FakeServer.Served(
            handler: { request, answer in fake.respond(to: request, with: answer) },
            listening: ["project": account.projectID, "tokenPaths": fake.tokenPaths.sorted()],
            logFields: ["project": account.projectID, "tokenTTL": String(options.tokenLifetime)])
    }

    /// Paths answered by the token endpoint: `/token` and the path of the account's `token_uri`.
    var tokenPaths: Set<String> { ["/token", account.tokenPath] }

    var stats: MessageLog.Stats { messages.stats }

    /// Sends and token requests are answered after any injected latency and recorded with their answers; anything
    /// else is answered at once.
    func respond(to request: HTTPRequest, with answer: HTTPResponder) {
        let project = Self.sendProject(in: request.path)
        guard project != nil || tokenPaths.contains(request.path) else {
            answer(control(request))
            return
        }
        guard request.method == "POST" else {
            answer(.methodNotAllowed(allowed: ["POST"]))
            return
        }
        if let project {
            answerRecorded(.send, request, latency: faults.latencyMilliseconds(.send), answer) { [self] in send(request, project: project) }
        } else {
            answerRecorded(.token, request, latency: faults.latencyMilliseconds(.token), answer) { [self] in issueToken(request) }
        }
    }

    func ownRoute(_ request: HTTPRequest) -> HTTPResponse? {
        guard request.method == "DELETE", request.path == "/fake/tokens" else { return nil }
        tokens.revokeAll()
        log.info("access tokens revoked")
        return .empty()
    }

    func noRoute(_ request: HTTPRequest) -> HTTPResponse {
        .json(object: ["error": "no route for \(request.method) \(request.path)"], status: 404)
    }

    func resetMessages() { messages.reset() }

    func listMessages(_ request: HTTPRequest, since: Int, limit: Int) -> HTTPResponse {
        Self.json(messages.messages(since: since, limit: limit, token: request.queryValue("token"), event: request.queryValue("event")))
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
        if let failure = faults.failure(.token) {
            messages.countToken(issued: false)
            log.info("token request failed by fault", ["status": String(failure.status), "error": failure.errorCode ?? ""])
            return GoogleErrorBody.oauth(failure.errorCode ?? "invalid_grant", failure.message ?? "", status: failure.status)
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
            return GoogleErrorBody.fcm(status: 400, errorCode: "INVALID_ARGUMENT", message: error.description, violation: error)
        }
        let tokens = [message.token] + (message.liveActivityToken.map { [$0] } ?? [])
        if let failure = faults.failure(.send, targets: tokens) {
            messages.reject(status: failure.status, errorCode: failure.errorCode)
            log.debug("send failed by fault", ["status": String(failure.status), "token": FakeLog.redact(message.token)])
            return GoogleErrorBody.fcm(
                status: failure.status, errorCode: failure.errorCode, message: failure.message ?? "",
                violation: failure.violationField.map { GoogleErrorBody.FieldViolation(field: $0, description: failure.message ?? "") },
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
}
