import Foundation
import HTTPServer

extension FakeAPNs {
    /// The fake's own routes (`/fake/…`, `/healthz`); anything else is Apple's 404 `BadPath`.
    func control(_ request: HTTPRequest) -> HTTPResponse {
        switch (request.method, request.path) {
        case ("GET", "/healthz"): return .text("ok\n")
        case ("GET", "/fake/messages"): return listPushes(request)
        case ("DELETE", "/fake/messages"):
            pushes.reset()
            log.info("messages and stats reset")
            return .empty()
        case ("GET", "/fake/stats"): return Self.json(pushes.stats)
        case ("GET", "/fake/channels"): return Self.json(channels.all())
        case ("DELETE", "/fake/channels"):
            channels.reset()
            log.info("channels forgotten")
            return .empty()
        case ("GET", "/fake/requests"):
            var kind: RequestLog.Kind?
            if let text = request.queryValue("kind") {
                guard let parsed = RequestLog.Kind(rawValue: text), [.device, .broadcast, .channels].contains(parsed) else {
                    return .json(object: ["error": "kind must be device, broadcast or channels"], status: 400)
                }
                kind = parsed
            }
            return Self.json(requests.entries(kind: kind))
        case ("DELETE", "/fake/requests"):
            requests.reset()
            return .empty()
        case ("GET", "/fake/faults"): return Self.json(faults.snapshot)
        case ("POST", "/fake/faults"): return addFaults(request)
        case ("DELETE", "/fake/faults"):
            faults.clear()
            log.info("faults cleared")
            return .empty()
        case (_, "/healthz"), (_, "/fake/stats"): return .methodNotAllowed(allowed: ["GET"])
        case (_, "/fake/messages"), (_, "/fake/channels"), (_, "/fake/requests"): return .methodNotAllowed(allowed: ["GET", "DELETE"])
        case (_, "/fake/faults"): return .methodNotAllowed(allowed: ["GET", "POST", "DELETE"])
        default: return .json(object: ["reason": "BadPath"], status: 404)
        }
    }

    private func listPushes(_ request: HTTPRequest) -> HTTPResponse {
        var numbers = ["since": 0, "limit": Int.max]
        for name in numbers.keys.sorted() {
            guard let text = request.queryValue(name) else { continue }
            guard let value = Int(text), value >= 0 else { return .json(object: ["error": "\(name) must be a non-negative integer"], status: 400) }
            numbers[name] = value
        }
        var kind: RequestLog.Kind?
        if let text = request.queryValue("kind") {
            guard let parsed = RequestLog.Kind(rawValue: text), parsed == .device || parsed == .broadcast else {
                return .json(object: ["error": "kind must be device or broadcast"], status: 400)
            }
            kind = parsed
        }
        return Self.json(pushes.entries(
            since: numbers["since"]!, limit: numbers["limit"]!, kind: kind, target: request.queryValue("token"), event: request.queryValue("event")))
    }

    private func addFaults(_ request: HTTPRequest) -> HTTPResponse {
        FaultRuleBody.add(request.body, apply: faults.apply) { (rules: [APNsFaultRule]) in
            log.info("faults added", ["rules": String(rules.count)])
            return Self.json(faults.snapshot)
        }
    }

    static func json<T: Encodable>(_ value: T) -> HTTPResponse {
        let encoder = HTTPResponse.jsonEncoder
        encoder.dateEncodingStrategy = .secondsSince1970
        return .json(value, encoder: encoder)
    }
}
