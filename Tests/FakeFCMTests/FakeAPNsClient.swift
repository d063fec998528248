import Foundation
import HTTPClient
import JWT
import TestSupport

/// Talks to a `FakeAPNsProcess` as a provider does: HTTP/2 over TLS through nghttpx (the project's libcurl client,
/// trusting the test CA), with a provider token signed by the fake's key.
struct FakeAPNsClient {
    let apns: FakeAPNsProcess
    let http: HTTPClient

    init(_ apns: FakeAPNsProcess) throws {
        self.apns = apns
        http = try HTTPClient(configuration: HTTPClientConfiguration(name: "fake-apns-test", maxConnections: 2, caFile: apns.caFile))
    }

    /// An ES256 provider token: `kid`, `iss` and `iat` as given (the fake's key id and team, now, by default).
    func providerToken(keyID: String? = nil, teamID: String? = nil, issuedAt: Date = Date(), keyFile: String? = nil) throws -> String {
        let key = try AsymmetricKey.privateKey(file: keyFile ?? apns.keyFile)
        let claims = #"{"iss":"\#(teamID ?? apns.teamID)","iat":\#(Int(issuedAt.timeIntervalSince1970))}"#
        return try JWTSigner.es256(privateKey: key, keyID: keyID ?? apns.keyID)
            .sign(headerJSON: Array(#"{"alg":"ES256","kid":"\#(keyID ?? apns.keyID)"}"#.utf8), claimsJSON: Array(claims.utf8))
    }

    /// The headers of a Live Activity token push, with `changes` applied (a nil value removes the header).
    func liveActivityHeaders(_ changes: [String: String?] = [:], bearer: String? = nil) throws -> [String: String] {
        var headers = [
            "apns-push-type": "liveactivity", "apns-topic": "\(apns.bundleID).push-type.liveactivity", "apns-priority": "10",
            "apns-expiration": "0", "authorization": "bearer \(try bearer ?? providerToken())", "content-type": "application/json",
        ]
        for (name, value) in changes { headers[name] = value }
        return headers
    }

    static func aps(_ event: String = "update", extra: String = "") -> String {
        #"{"aps":{"event":"\#(event)","timestamp":1760000000,"content-state":{"streamId":"s1"}\#(extra)}}"#
    }

    func send(_ method: HTTPRequest.Method = .post, _ path: String, headers: [String: String], body: String = "", channelHost: Bool = false) async throws -> HTTPResponse {
        var request = HTTPRequest(method: method, url: (channelHost ? apns.channelURL : apns.baseURL) + path, body: Array(body.utf8))
        for (name, value) in headers { request.headers.set(name, value) }
        return try await http.send(request)
    }

    func push(_ token: String, headers: [String: String]? = nil, body: String = FakeAPNsClient.aps()) async throws -> HTTPResponse {
        try await send(.post, "/3/device/\(token)", headers: try headers ?? liveActivityHeaders(), body: body)
    }

    /// Creates a channel; its id.
    func createChannel(policy: Int = 1) async throws -> String {
        let answer = try await send(.post, "/1/apps/\(apns.bundleID)/channels", headers: ["authorization": "bearer \(try providerToken())"],
                                    body: #"{"message-storage-policy":\#(policy),"push-type":"LiveActivity"}"#, channelHost: true)
        guard answer.status == 201, let id = answer.headers["apns-channel-id"] else {
            throw UnexpectedAnswer(what: "channel creation", answer: "\(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
        }
        return id
    }

    func broadcast(channel: String, body: String = FakeAPNsClient.aps(), headers extra: [String: String] = [:]) async throws -> HTTPResponse {
        var headers = ["apns-push-type": "liveactivity", "apns-channel-id": channel, "apns-priority": "10", "authorization": "bearer \(try providerToken())"]
        headers.merge(extra) { $1 }
        return try await send(.post, "/4/broadcasts/apps/\(apns.bundleID)", headers: headers, body: body)
    }
}

extension HTTPResponse {
    /// `reason` of an APNs error body.
    var reason: String? {
        ((try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any])?["reason"] as? String
    }

    var json: [String: Any] { ((try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]) ?? [:] }
}
