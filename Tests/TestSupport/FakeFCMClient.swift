import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Talks to a fake over real HTTP, the way the push client will.
public struct FakeFCMClient: Sendable {
    public struct Answer: Sendable {
        public let status: Int
        public let body: Data
        public let headers: [String: String]
        public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
        public var array: [[String: Any]] { (try? JSONSerialization.jsonObject(with: body)) as? [[String: Any]] ?? [] }
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    public let baseURL: String
    public let session: URLSession

    public init(_ fake: FakeFCMProcess, connections: Int = 8) {
        self.init(baseURL: fake.baseURL, connections: connections)
    }

    /// A client of the fake listening at `baseURL` (plain HTTP): the fake FCM, or the fake APNs' control routes.
    public init(baseURL: String, connections: Int = 8) {
        self.baseURL = baseURL
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = connections
        session = URLSession(configuration: configuration)
    }

    public func call(_ method: String, _ path: String, body: Data? = nil, headers: [String: String] = [:]) async throws -> Answer {
        var request = URLRequest(url: URL(string: baseURL + path)!)
        request.httpMethod = method
        request.httpBody = body
        request.timeoutInterval = 20
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await session.data(for: request)
        let http = response as! HTTPURLResponse
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields { fields[String(describing: name).lowercased()] = String(describing: value) }
        return Answer(status: http.statusCode, body: data, headers: fields)
    }

    public func json(_ method: String, _ path: String, _ object: Any, bearer: String? = nil) async throws -> Answer {
        var headers = ["Content-Type": "application/json"]
        if let bearer { headers["Authorization"] = "Bearer \(bearer)" }
        return try await call(method, path, body: try JSONSerialization.data(withJSONObject: object), headers: headers)
    }

    /// `POST <path>` with the JWT-bearer grant form.
    public func exchange(assertion: String, path: String = "/token", grantType: String = "urn:ietf:params:oauth:grant-type:jwt-bearer") async throws -> Answer {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        let form = "grant_type=\(grantType.addingPercentEncoding(withAllowedCharacters: allowed)!)&assertion=\(assertion.addingPercentEncoding(withAllowedCharacters: allowed)!)"
        return try await call("POST", path, body: Data(form.utf8), headers: ["Content-Type": "application/x-www-form-urlencoded"])
    }


    public func send(_ message: [String: Any], bearer: String?, project: String, extra: [String: Any] = [:]) async throws -> Answer {
        try await json("POST", "/v1/projects/\(project)/messages:send", extra.merging(["message": message]) { $1 }, bearer: bearer)
    }
}

public struct UnexpectedAnswer: Error, CustomStringConvertible {
    public let what: String
    public let answer: String
    public init(what: String, answer: String) {
        self.what = what
        self.answer = answer
    }
    public var description: String { "\(what) answered \(answer)" }
}
