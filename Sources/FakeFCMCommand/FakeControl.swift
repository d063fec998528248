import BlockingIO
import Foundation
import HTTPServer

/// What both fakes share: the requests they answer under an injected latency, and their own routes —
/// `GET /healthz`; `GET /fake/messages[?since=<seq>&limit=<n>&…]`, `DELETE /fake/messages`; `GET /fake/stats`;
/// `GET /fake/requests[?kind=…]`, `DELETE /fake/requests`; `GET|POST|DELETE /fake/faults` (`FaultRule`, one or an
/// array). Each fake adds its own routes and its answer to a path no route serves.
protocol FakeControl: Sendable {
    associatedtype Stats: Encodable
    var faults: FaultInjector { get }
    var requests: RequestLog { get }
    var log: FakeLog { get }
    /// Holds requests back by the injected latency (one thread, not a timer per request).
    var delays: DelayLine { get }
    var stats: Stats { get }
    /// The kinds `GET /fake/requests?kind=` takes.
    static var requestKinds: [RequestLog.Kind] { get }
    /// The methods of each of the fake's own routes, for a 405 answer.
    static var routeMethods: [String: [String]] { get }
    /// `GET /fake/messages` once `since` and `limit` are read; `BadRequest` for a bad parameter of its own.
    func listMessages(_ request: HTTPRequest, since: Int, limit: Int) throws(BadRequest) -> HTTPResponse
    /// `DELETE /fake/messages`: forgets kept messages and statistics.
    func resetMessages()
    /// The fake's routes beyond the shared ones; nil for any other request.
    func ownRoute(_ request: HTTPRequest) -> HTTPResponse?
    /// The answer to a path no route serves.
    func noRoute(_ request: HTTPRequest) -> HTTPResponse
}

/// A bad query parameter or fault rule: 400 with `{"error": reason}`.
struct BadRequest: Error, Sendable {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

extension FakeControl {
    /// Answers with `answerNow` after `latency` milliseconds on the latency line's thread (no task, no hop through
    /// the Swift pool: the fake's CPU is the benchmarks' too), or at once, and records the request with its answer.
    func answerRecorded(
        _ kind: RequestLog.Kind, _ request: HTTPRequest, latency: Int, _ answer: HTTPResponder,
        _ answerNow: @escaping @Sendable () -> HTTPResponse
    ) {
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

    /// The fake's own routes (`/fake/…`, `/healthz`), answered at once.
    func control(_ request: HTTPRequest) -> HTTPResponse {
        do throws(BadRequest) {
            switch (request.method, request.path) {
            case ("GET", "/healthz"): return .text("ok\n")
            case ("GET", "/fake/messages"):
                return try listMessages(request, since: try Self.number("since", in: request) ?? 0, limit: try Self.number("limit", in: request) ?? Int.max)
            case ("DELETE", "/fake/messages"):
                resetMessages()
                log.info("messages and stats reset")
                return .empty()
            case ("GET", "/fake/stats"): return Self.json(stats)
            case ("GET", "/fake/requests"): return Self.json(requests.entries(kind: try Self.kind(in: request, among: Self.requestKinds)))
            case ("DELETE", "/fake/requests"):
                requests.reset()
                return .empty()
            case ("GET", "/fake/faults"): return Self.json(faults.snapshot)
            case ("POST", "/fake/faults"): return try addFaults(request)
            case ("DELETE", "/fake/faults"):
                faults.clear()
                log.info("faults cleared")
                return .empty()
            default:
                if let answer = ownRoute(request) { return answer }
                if let allowed = Self.routeMethods[request.path] { return .methodNotAllowed(allowed: allowed) }
                return noRoute(request)
            }
        } catch {
            return .json(object: ["error": error.reason], status: 400)
        }
    }

    /// The `kind` query parameter, one of `kinds`; nil when absent.
    static func kind(in request: HTTPRequest, among kinds: [RequestLog.Kind]) throws(BadRequest) -> RequestLog.Kind? {
        guard let text = request.queryValue("kind") else { return nil }
        guard let kind = RequestLog.Kind(rawValue: text), kinds.contains(kind) else {
            throw BadRequest("kind must be " + kinds.dropLast().map(\.rawValue).joined(separator: ", ") + " or " + (kinds.last?.rawValue ?? ""))
        }
        return kind
    }

    static func json<T: Encodable>(_ value: T) -> HTTPResponse {
        let encoder = HTTPResponse.jsonEncoder
        encoder.dateEncodingStrategy = .secondsSince1970
        return .json(value, encoder: encoder)
    }

    /// A non-negative integer query parameter; nil when absent.
    private static func number(_ name: String, in request: HTTPRequest) throws(BadRequest) -> Int? {
        guard let text = request.queryValue(name) else { return nil }
        guard let value = Int(text), value >= 0 else { throw BadRequest("\(name) must be a non-negative integer") }
        return value
    }

    /// One rule object or an array of them, applied all or none; 400 with the reason when the body is no rule or a
    /// rule makes no sense.
    private func addFaults(_ request: HTTPRequest) throws(BadRequest) -> HTTPResponse {
        let decoder = JSONDecoder()
        let rules: [FaultRule]
        if let many = try? decoder.decode([FaultRule].self, from: request.body) {
            rules = many
        } else if let one = try? decoder.decode(FaultRule.self, from: request.body) {
            rules = [one]
        } else {
            throw BadRequest("expected a fault rule object or an array of them")
        }
        try faults.apply(rules)
        let snapshot = faults.snapshot
        log.info("faults added", [
            "rules": String(rules.count), "latencyMs": String(snapshot.latencyMs), "dropConnections": String(snapshot.dropConnections),
            "failures": String(snapshot.failures.count),
        ])
        return Self.json(snapshot)
    }
}
