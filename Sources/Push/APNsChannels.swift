import Foundation
import HTTPClient
import HTTPTypes

/// Apple's broadcast channels (iOS 18, SPEC 12.5) over HTTP/2 with the APNs provider token: the channel management API
/// at `channelURL` (`POST|GET|DELETE /1/apps/{bundleId}/channels`, `GET /1/apps/{bundleId}/all-channels`) and broadcast
/// pushes at the APNs base URL (`POST /4/broadcasts/apps/{bundleId}`, no `apns-topic`). Never throws: every outcome is
/// a classified `PushResult`, as for token pushes.
public struct APNsChannels: Sendable {
    /// Apple's reasons for a channel it does not know (deleted, expired, or never created for this app).
    public static let channelGoneReasons: Set<String> = ["BadChannelId", "ChannelNotRegistered"]

    public let configuration: APNsConfiguration
    public let channelURL: String
    private let tokens: any AccessTokenProviding
    private let http: any HTTPRequestSending
    private let now: @Sendable () -> Date

    public init(configuration: APNsConfiguration, channelURL: String, tokens: any AccessTokenProviding, http: any HTTPRequestSending,
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.configuration = configuration
        var url = channelURL
        while url.hasSuffix("/") { url.removeLast() }
        self.channelURL = url
        self.tokens = tokens
        self.http = http
        self.now = now
    }

    /// Creates a Live Activity channel storing its most recent message for offline devices. Accepted with the
    /// channel's id as `messageName` (Apple's `apns-channel-id` response header).
    public func create() async -> PushResult {
        let url = "\(channelURL)/1/apps/\(configuration.bundleID)/channels"
        let body = Array(#"{"message-storage-policy":1,"push-type":"LiveActivity"}"#.utf8)
        return await send { bearer in
            HTTPRequest(method: .post, url: url, headers: Self.headers(bearer: bearer, json: true), body: body, timeout: configuration.requestTimeout)
        } classify: { response in
            if response.status == 201 || response.status == 200 {
                guard let id = response.headers["apns-channel-id"], !id.isEmpty else {
                    return .result(.retryable(after: nil, reason: "channel created without an apns-channel-id header"))
                }
                return .result(.accepted(messageName: id))
            }
            return Self.classify(response, now: now())
        }
    }

    /// Deletes a channel; a channel Apple no longer knows counts as deleted.
    public func delete(_ channelID: String) async -> PushResult {
        let url = "\(channelURL)/1/apps/\(configuration.bundleID)/channels"
        return await send { bearer in
            var headers = Self.headers(bearer: bearer, json: false)
            headers.set("apns-channel-id", channelID)
            return HTTPRequest(method: .delete, url: url, headers: headers, timeout: configuration.requestTimeout)
        } classify: { response in
            if (200..<300).contains(response.status) || response.status == 404 { return .result(.accepted(messageName: channelID)) }
            let verdict = Self.classify(response, now: now())
            if case .result(.rejected(let reason)) = verdict, Self.channelGoneReasons.contains(reason) { return .result(.accepted(messageName: channelID)) }
            return verdict
        }
    }

    /// Every channel of the app, or why not.
    public func list() async -> (result: PushResult, channels: [String]) {
        let url = "\(channelURL)/1/apps/\(configuration.bundleID)/all-channels"
        var listed: [String] = []
        let result = await send { bearer in
            HTTPRequest(method: .get, url: url, headers: Self.headers(bearer: bearer, json: false), timeout: configuration.requestTimeout)
        } classify: { response in
            guard response.status == 200 else { return Self.classify(response, now: now()) }
            guard let decoded = try? JSONDecoder().decode(ChannelList.self, from: Data(response.body)) else {
                return .result(.rejected(reason: "the channel list is not {\"channels\": [...]}"))
            }
            listed = decoded.channels
            return .result(.accepted(messageName: nil))
        }
        return (result, listed)
    }

    /// One broadcast push on `channelID` to every activity subscribed to it. `apnsHeaders` come from the payload
    /// (`apns-priority`, `apns-expiration`); `apns-topic` is never sent. A channel Apple does not know is
    /// `.rejected` with one of `channelGoneReasons`.
    public func broadcast(channelID: String, apnsHeaders: [String: String], apsJSON: [UInt8]) async -> PushResult {
        await send { bearer in
            Self.broadcastRequest(channelID: channelID, apnsHeaders: apnsHeaders, apsJSON: apsJSON, configuration: configuration, bearer: bearer)
        } classify: { Self.classify($0, now: now()) }
    }

    /// The broadcast request: `POST {base}/4/broadcasts/apps/{bundleId}` with `apns-channel-id`,
    /// `apns-push-type: liveactivity`, the payload's `apns-*` headers, and no `apns-topic`.
    public static func broadcastRequest(channelID: String, apnsHeaders: [String: String], apsJSON: [UInt8], configuration: APNsConfiguration,
                                        bearer: String) -> HTTPRequest {
        var headers = HTTPHeaders()
        for (name, value) in apnsHeaders.sorted(by: { $0.key < $1.key }) where name.lowercased().hasPrefix("apns-") && name.lowercased() != "apns-topic" {
            headers.set(name.lowercased(), value)
        }
        if headers["apns-priority"] == nil { headers.set("apns-priority", "10") }
        headers.set("apns-channel-id", channelID)
        headers.set("apns-push-type", "liveactivity")
        headers.set("authorization", "bearer \(bearer)")
        headers.set("content-type", "application/json")
        return HTTPRequest(method: .post, url: "\(configuration.baseURL)/4/broadcasts/apps/\(configuration.bundleID)", headers: headers,
                           body: apsJSON, timeout: configuration.requestTimeout)
    }

    /// APNs' classification, with a channel Apple does not know as `.rejected(reason)` whatever its status.
    static func classify(_ response: HTTPResponse, now: Date) -> PushOutcomeClassifier.Verdict {
        if let reason = (try? JSONDecoder().decode(ErrorBody.self, from: Data(response.body)))?.reason, channelGoneReasons.contains(reason) {
            return .result(.rejected(reason: reason))
        }
        return PushOutcomeClassifier.apns(status: response.status, headers: response.headers, body: response.body, now: now)
    }

    private static func headers(bearer: String, json: Bool) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.set("authorization", "bearer \(bearer)")
        if json { headers.set("content-type", "application/json") }
        return headers
    }

    private func send(_ request: @escaping (String) -> HTTPRequest, classify: (HTTPResponse) -> PushOutcomeClassifier.Verdict) async -> PushResult {
        await AuthenticatedSend.apns(tokens: tokens, http: http).run(request: request, classify: classify)
    }

    private struct ErrorBody: Decodable { let reason: String? }
    private struct ChannelList: Decodable { let channels: [String] }
}
