import BlockingIO
import Foundation
import HTTPServer
import JSON
import JWT

/// The fake APNs' routes (HTTP/1.1 here; `nghttpx` in front speaks HTTP/2 over TLS, as APNs does):
/// - `POST /3/device/{token}`: a token push, checked as APNs checks it (provider token, headers, payload) → 200 with
///   `apns-id`, or Apple's error `{"reason": …}` (410 adds `timestamp`);
/// - `POST /4/broadcasts/apps/{bundleId}`: a broadcast on the channel in `apns-channel-id` → 200 with `apns-request-id`;
/// - `POST|GET|DELETE /1/apps/{bundleId}/channels` (`apns-channel-id` for read and delete), `GET
///   /1/apps/{bundleId}/all-channels`: channel management → 201 with `apns-channel-id`, 200 with the configuration
///   or `{"channels": […]}`, 204;
/// - `GET /fake/messages[?since=<seq>&limit=<n>&kind=device|broadcast&token=<token or channel id>&event=<e>]`,
///   `DELETE /fake/messages`: accepted pushes and broadcasts, reset;
/// - `GET /fake/stats`; `GET /fake/channels`, `DELETE /fake/channels`: channels alive, forget them all;
/// - `GET /fake/requests[?kind=device|broadcast|channels]`, `DELETE /fake/requests`: the newest requests as received
///   with the answers given;
/// - `GET|POST|DELETE /fake/faults`: show, add (`FaultRule`, one or an array), clear;
/// - `GET /healthz`.
/// With `channelHost` set, channel management answers on that host only, pushes and broadcasts on any other.
struct FakeAPNs: FakeControl {
    let bundleID: String
    let tokens: ProviderTokenChecker
    let channels: ChannelRegistry
    let faults: FaultInjector
    let pushes: APNsPushLog
    let requests: RequestLog
    let log: FakeLog
    private let now: @Sendable () -> Date
    let delays = DelayLine(name: "fake-apns-latency")
    /// When set, the `Host` (host:port) channel management is reached at, as Apple's separate host: channel requests
    /// to another host and pushes or broadcasts to this one get 404 `BadPath`.
    var channelHost: String?

    init(bundleID: String, tokens: ProviderTokenChecker, channelLimit: Int, keep: Int, keepRequests: Int, recordFile: RecordFile?,
         log: FakeLog, now: @escaping @Sendable () -> Date = { Date() }) {
        self.bundleID = bundleID
        self.tokens = tokens
        channels = ChannelRegistry(limit: channelLimit, now: now)
        faults = FaultInjector(service: .apns, now: now)
        pushes = APNsPushLog(capacity: keep, recordFile: recordFile, now: now)
        requests = RequestLog(capacity: keepRequests)
        self.log = log
        self.now = now
    }

    static let requestKinds: [RequestLog.Kind] = [.device, .broadcast, .channels]
    static let routeMethods = [
        "/healthz": ["GET"], "/fake/stats": ["GET"], "/fake/messages": ["GET", "DELETE"], "/fake/channels": ["GET", "DELETE"],
        "/fake/requests": ["GET", "DELETE"], "/fake/faults": ["GET", "POST", "DELETE"],
    ]

    /// The fake of `options`, ready to serve.
    static func served(_ options: FakeOptions, log: FakeLog, recordFile: RecordFile?) throws(UsageError) -> FakeServer.Served {
        let key: AsymmetricKey
        do {
            key = try (try? AsymmetricKey.privateKey(file: options.keyFile)) ?? AsymmetricKey.publicKey(file: options.keyFile)
        } catch {
            throw UsageError("--key \(options.keyFile): \(error)")
        }
        let tokens = try ProviderTokenChecker(key: key, keyID: options.keyID, teamID: options.teamID, now: { Date() })
        var fake = FakeAPNs(
            bundleID: options.bundleID, tokens: tokens, channelLimit: options.maxChannels, keep: options.keep, keepRequests: options.keepRequests,
            recordFile: recordFile, log: log)
        fake.channelHost = options.channelHost
        return FakeServer.Served(
            handler: { [fake] request, answer in fake.respond(to: request, with: answer) },
            listening: ["bundleId": options.bundleID, "protocol": "apns"], logFields: ["bundleId": options.bundleID, "keyId": options.keyID])
    }

    var stats: APNsPushLog.Stats { pushes.stats }

    func resetMessages() { pushes.reset() }

    func listMessages(_ request: HTTPRequest, since: Int, limit: Int) throws(BadRequest) -> HTTPResponse {
        let kind = try Self.kind(in: request, among: [.device, .broadcast])
        return Self.json(pushes.entries(since: since, limit: limit, kind: kind, target: request.queryValue("token"), event: request.queryValue("event")))
    }

    func ownRoute(_ request: HTTPRequest) -> HTTPResponse? {
        switch (request.method, request.path) {
        case ("GET", "/fake/channels"): return Self.json(channels.all())
        case ("DELETE", "/fake/channels"):
            channels.reset()
            log.info("channels forgotten")
            return .empty()
        default: return nil
        }
    }

    /// Apple's 404 `BadPath`.
    func noRoute(_ request: HTTPRequest) -> HTTPResponse { .json(object: ["reason": "BadPath"], status: 404) }

    /// The APNs endpoint a path belongs to, and the token or bundle id it names.
    static func endpoint(of path: String) -> (kind: RequestLog.Kind, name: String)? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        switch parts.count {
        case 4 where parts[1] == "3" && parts[2] == "device": return (.device, parts[3])
        case 5 where parts[1] == "4" && parts[2] == "broadcasts" && parts[3] == "apps": return (.broadcast, parts[4])
        case 5 where parts[1] == "1" && parts[2] == "apps" && (parts[4] == "channels" || parts[4] == "all-channels"): return (.channels, parts[3])
        default: return nil
        }
    }

    /// APNs requests are answered (after any injected latency, on the latency line's thread) and recorded; the
    /// fake's own routes are answered at once.
    func respond(to request: HTTPRequest, with answer: HTTPResponder) {
        guard let (kind, name) = Self.endpoint(of: request.path) else {
            answer(control(request))
            return
        }
        answerRecorded(kind, request, latency: faults.latencyMilliseconds(kind), answer) { [self] in apns(request, kind: kind, name: name) }
    }

    private func apns(_ request: HTTPRequest, kind: RequestLog.Kind, name: String) -> HTTPResponse {
        if faults.takeDrop() {
            pushes.reject(status: 0, reason: nil)
            log.debug("request dropped by fault", ["path": request.path])
            return .dropConnection
        }
        // `apns-id` (token pushes) or `apns-request-id` (broadcasts, channel management) on every APNs answer.
        let idHeader = kind == .device ? "apns-id" : "apns-request-id"
        let id = request.headers[idHeader] ?? UUID().uuidString.lowercased()
        var response: HTTPResponse
        do throws(APNsRefusal) {
            if let channelHost, (request.headers["host"] == channelHost) != (kind == .channels) { throw APNsRefusal(status: 404, reason: "BadPath") }
            try tokens.check(authorization: request.headers["authorization"])
            switch kind {
            case .device: response = try push(request, token: name, id: id)
            case .broadcast: response = try broadcast(request, bundleID: name, id: id)
            default: response = try manageChannels(request, bundleID: name)
            }
        } catch {
            pushes.reject(status: error.status, reason: error.reason)
            log.debug("request refused", ["path": request.path, "status": String(error.status), "reason": error.reason])
            var body: [String: Any] = ["reason": error.reason]
            if error.status == 410 { body["timestamp"] = error.timestamp ?? Int64(now().timeIntervalSince1970 * 1000) }
            response = HTTPResponse.json(object: body, status: error.status)
            if let retryAfter = error.retryAfter { response.headers["Retry-After"] = String(retryAfter) }
        }
        response.headers[idHeader] = id
        return response
    }

    private func push(_ request: HTTPRequest, token: String, id: String) throws(APNsRefusal) -> HTTPResponse {
        guard request.method == "POST" else { throw .init(status: 405, reason: "MethodNotAllowed") }
        guard APNsRequestCheck.isDeviceToken(token) else { throw .init(status: 400, reason: "BadDeviceToken") }
        if let refusal = APNsRequestCheck.deviceHeaders(request, bundleID: bundleID) { throw refusal }
        let payload = try APNsRequestCheck.payload(request.body, liveActivity: request.headers["apns-push-type"] == "liveactivity").get()
        try injectedFailure(.device, target: token)
        pushes.accept(kind: .device, target: token, id: id, request: request, payload: payload)
        log.debug("push accepted", ["token": FakeLog.redact(token), "apnsId": id])
        return .empty(status: 200)
    }

    private func broadcast(_ request: HTTPRequest, bundleID: String, id: String) throws(APNsRefusal) -> HTTPResponse {
        guard request.method == "POST" else { throw .init(status: 405, reason: "MethodNotAllowed") }
        guard bundleID == self.bundleID else { throw .init(status: 400, reason: "TopicDisallowed") }
        if let refusal = APNsRequestCheck.broadcastHeaders(request) { throw refusal }
        let channel = request.headers["apns-channel-id"] ?? ""
        guard channels.channel(channel, bundleID: bundleID) != nil else { throw .init(status: 404, reason: "ChannelNotRegistered") }
        let payload = try APNsRequestCheck.payload(request.body, liveActivity: true).get()
        try injectedFailure(.broadcast, target: channel)
        guard channels.countBroadcast(channel, bundleID: bundleID) else { throw .init(status: 404, reason: "ChannelNotRegistered") }
        pushes.accept(kind: .broadcast, target: channel, id: id, request: request, payload: payload)
        log.debug("broadcast accepted", ["channel": channel, "requestId": id])
        return .empty(status: 200)
    }

    /// Throws the injected failure for this request, if one applies.
    func injectedFailure(_ kind: RequestLog.Kind, target: String?) throws(APNsRefusal) {
        guard let failure = faults.failure(kind, targets: target.map { [$0] } ?? []) else { return }
        throw APNsRefusal(status: failure.status, reason: failure.reason ?? "", retryAfter: failure.retryAfter, timestamp: failure.timestamp)
    }
}
