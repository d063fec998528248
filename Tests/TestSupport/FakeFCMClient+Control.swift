import Foundation

/// One request as the fake's `GET /fake/requests` shows it.
public struct FakeFCMRequest: Decodable, Sendable {
    public let seq: Int
    /// `token` or `send`.
    public let kind: String
    public let method: String
    public let path: String
    /// Lower-case names.
    public let headers: [String: String]
    public let body: String
    /// 0 when the fake dropped the connection without an answer.
    public let status: Int
    public let answer: String
}

extension FakeFCMClient {
    /// `POST /fake/faults` with one rule or an array of them; throws unless the fake took them.
    public func fault(_ rule: Any) async throws {
        let answer = try await json("POST", "/fake/faults", rule)
        guard answer.status == 200 else { throw UnexpectedAnswer(what: "POST /fake/faults", answer: answer.text) }
    }

    /// `DELETE /fake/tokens`: every access token issued so far stops working.
    public func revokeTokens() async throws {
        let answer = try await call("DELETE", "/fake/tokens")
        guard answer.status == 204 else { throw UnexpectedAnswer(what: "DELETE /fake/tokens", answer: answer.text) }
    }

    /// `GET /fake/requests`: the newest token requests and sends with their answers, oldest first.
    public func requests(kind: String? = nil) async throws -> [FakeFCMRequest] {
        let answer = try await call("GET", "/fake/requests" + (kind.map { "?kind=\($0)" } ?? ""))
        guard answer.status == 200 else { throw UnexpectedAnswer(what: "GET /fake/requests", answer: answer.text) }
        return try JSONDecoder().decode([FakeFCMRequest].self, from: answer.body)
    }
}
