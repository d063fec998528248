import CountdownAPI
import Foundation
import HTTPServer
import HTTPTypes
import JWT
import Telemetry
import TestSupport

/// An `APIService` over a given store, called in-process, with helpers to mint bearer tokens.
struct TestAPI: Sendable {
    static let secret = Array("countdown-api-test-secret-0123456789abcdef".utf8)
    /// The fixed time the verifier sees.
    static let now = Date(timeIntervalSince1970: 1_900_000_000)

    let service: APIService
    let store: any APIStore
    let registry: MetricsRegistry
    let logs: CapturingLogSink
    let signer: JWTSigner

    /// An API verifying HS256 with `secret`, or RS256 with `rsaKey` when given; no write limits unless `policy` sets them.
    init(store: any APIStore, rsaKey: AsymmetricKey? = nil,
         policy: APIPolicy = APIPolicy(writesPerMinutePerUser: nil, writesPerMinutePerIP: nil)) throws {
        let key: VerificationKey = try rsaKey.map { try .rs256($0) } ?? .hs256(secret: Self.secret)
        signer = try rsaKey.map { try JWTSigner.rs256(privateKey: $0) } ?? .hs256(secret: Self.secret)
        let verifier = JWTVerifier(keys: [key], leeway: .seconds(30), requireExpiry: true, now: { TestAPI.now })
        registry = MetricsRegistry()
        logs = CapturingLogSink()
        self.store = store
        service = APIService(
            store: store, authenticator: try Authenticator(verifier: verifier), metrics: APIMetrics(registry: registry),
            logger: Logger(level: .debug, sink: logs), policy: policy)
    }

    /// The value of an unlabelled counter (or the sum of a family's series), from the rendered metrics.
    func metric(_ name: String) -> Double {
        registry.render().split(separator: "\n").filter { $0.hasPrefix(name + " ") || $0.hasPrefix(name + "{") }
            .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0, +)
    }

    struct Claims: Encodable {
        var sub: String?
        var role: String?
        var exp: Double?
        var nbf: Double?
    }

    /// A token for `user`, valid for an hour around `now` unless told otherwise.
    func token(_ user: String, role: String? = nil, exp: Double? = TestAPI.now.timeIntervalSince1970 + 3600, nbf: Double? = nil) throws -> String {
        try signer.sign(Claims(sub: user, role: role, exp: exp, nbf: nbf))
    }

    struct Reply {
        let status: Int
        let headers: HTTPHeaders
        let body: Data
        var json: [String: Any] { ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any]) ?? [:] }
        var errorCode: String? { (json["error"] as? [String: Any])?["code"] as? String }
        var errorField: String? { (json["error"] as? [String: Any])?["field"] as? String }
        var errorMessage: String { ((json["error"] as? [String: Any])?["message"] as? String) ?? "" }
        var succeeded: Bool { status == 200 && json["success"] as? Bool == true }
    }

    /// Sends a request; `json` is serialized as the body with `Content-Type: application/json`.
    func send(
        _ method: String, _ path: String, json: [String: Any]? = nil, body: Data? = nil, contentType: String? = nil,
        bearer: String? = nil, headers extra: [(String, String)] = [], from remoteAddress: String = ""
    ) async -> Reply {
        var headers = HTTPHeaders()
        var payload = body ?? Data()
        if let json {
            payload = try! JSONSerialization.data(withJSONObject: json)
            headers["Content-Type"] = "application/json"
        }
        if let contentType { headers["Content-Type"] = contentType }
        if let bearer { headers["Authorization"] = "Bearer \(bearer)" }
        for (name, value) in extra { headers[name] = value }
        let (bare, query) = Self.query(of: path)
        let response = await service.respond(to: HTTPRequest(method: method, path: bare, query: query, headers: headers, body: payload,
                                                             remoteAddress: remoteAddress))
        return Reply(status: response.status, headers: response.headers, body: response.body)
    }

    /// `path` without its query string, and the query's items (percent-decoded), as the server parses them.
    static func query(of path: String) -> (path: String, items: [(name: String, value: String?)]) {
        guard let mark = path.firstIndex(of: "?") else { return (path, []) }
        let items = path[path.index(after: mark)...].split(separator: "&").map { item -> (name: String, value: String?) in
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map { String($0).removingPercentEncoding ?? String($0) }
            return (parts[0], parts.count > 1 ? parts[1] : nil)
        }
        return (String(path[..<mark]), items)
    }
}

/// Realistic field values.
enum Sample {
    static func deviceID() -> String { UUID().uuidString.lowercased() }
    static func fcmToken(_ seed: String = UUID().uuidString) -> String {
        "fcm_" + seed.replacingOccurrences(of: "-", with: "") + ":APA91b" + String(repeating: "x", count: 40)
    }
    static func hexToken(bytes: Int = 32) -> String {
        (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

}

extension Authenticator {
    /// An authenticator with one fixed verifier.
    init(verifier: JWTVerifier, cacheCapacity: Int = 10_000) throws {
        self.init(keys: try .fixed(verifier), cacheCapacity: cacheCapacity)
    }
}

extension JWTKeySource {
    /// A source holding one fixed verifier.
    static func fixed(_ verifier: JWTVerifier) throws -> JWTKeySource {
        try JWTKeySource(fixedKeys: verifier.keys, keysPath: nil, logger: Logger(level: .error)) { _ in verifier }
    }
}
