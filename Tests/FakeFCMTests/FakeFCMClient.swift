import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import JWT

/// Talks to a fake over real HTTP, the way the push client will.
struct FakeFCMClient: Sendable {
    struct Answer: Sendable {
        let status: Int
        let body: Data
        let headers: [String: String]
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
        var array: [[String: Any]] { (try? JSONSerialization.jsonObject(with: body)) as? [[String: Any]] ?? [] }
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    let baseURL: String
    let session: URLSession

    init(_ fake: FakeFCMProcess, connections: Int = 8) {
        baseURL = fake.baseURL
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = connections
        session = URLSession(configuration: configuration)
    }

    func call(_ method: String, _ path: String, body: Data? = nil, headers: [String: String] = [:]) async throws -> Answer {
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

    func json(_ method: String, _ path: String, _ object: Any, bearer: String? = nil) async throws -> Answer {
        var headers = ["Content-Type": "application/json"]
        if let bearer { headers["Authorization"] = "Bearer \(bearer)" }
        return try await call(method, path, body: try JSONSerialization.data(withJSONObject: object), headers: headers)
    }

    /// `POST <path>` with the JWT-bearer grant form.
    func exchange(assertion: String, path: String = "/token", grantType: String = "urn:ietf:params:oauth:grant-type:jwt-bearer") async throws -> Answer {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        let form = "grant_type=\(grantType.addingPercentEncoding(withAllowedCharacters: allowed)!)&assertion=\(assertion.addingPercentEncoding(withAllowedCharacters: allowed)!)"
        return try await call("POST", path, body: Data(form.utf8), headers: ["Content-Type": "application/x-www-form-urlencoded"])
    }

    /// A valid access token for the fake's account.
    func accessToken(for fake: FakeFCMProcess) async throws -> String {
        let answer = try await exchange(assertion: try Assertion.sign(for: fake))
        guard answer.status == 200, let token = answer.json["access_token"] as? String else {
            throw UnexpectedAnswer(what: "token exchange", answer: answer.text)
        }
        return token
    }

    func send(_ message: [String: Any], bearer: String?, project: String, extra: [String: Any] = [:]) async throws -> Answer {
        try await json("POST", "/v1/projects/\(project)/messages:send", extra.merging(["message": message]) { $1 }, bearer: bearer)
    }
}

struct UnexpectedAnswer: Error, CustomStringConvertible {
    let what: String
    let answer: String
    var description: String { "\(what) answered \(answer)" }
}
