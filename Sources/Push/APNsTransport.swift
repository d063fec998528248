import Foundation
import HTTPClient
import HTTPTypes

/// Sends Live Activity pushes straight to APNs over HTTP/2: `POST {base}/3/device/<activity token>` with an ES256
/// provider token. Notifications need an APNs device token, which the domain does not have; they are rejected.
public struct APNsTransport: PushTransport {
    public let configuration: APNsConfiguration
    private let tokens: any AccessTokenProviding
    private let http: any HTTPRequestSending
    private let now: @Sendable () -> Date

    public init(
        configuration: APNsConfiguration, tokens: any AccessTokenProviding, http: any HTTPRequestSending,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.configuration = configuration
        self.tokens = tokens
        self.http = http
        self.now = now
    }

    /// Sends the batch through one `sendAll` of the HTTP client; messages APNs cannot take are answered without a
    /// request.
    public func sendAll(_ messages: [PushMessage], onAnswer: PushAnswerHook?) async -> [PushResult] {
        let (configuration, now) = (self.configuration, self.now)
        return await AuthenticatedSend.apns(tokens: tokens, http: http).runAll(
            messages, onAnswer: onAnswer,
            prepare: { message in
                guard case let .liveActivity(_, activityToken, apnsHeaders, apsJSON) = message.content else {
                    return .answered(.rejected(reason: "APNs transport sends Live Activity pushes only; notifications go through FCM"))
                }
                guard Self.isHex(activityToken) else {
                    return .answered(.tokenRefused(TokenRefusal(
                        token: .activity, reason: "not hexadecimal", suspect: "the app's Live Activity token registration",
                        misconfigurationShaped: false)))
                }
                guard FCMRequestBody.isJSONObject(apsJSON) else { return .answered(.rejected(reason: "the aps payload is not a JSON object")) }
                return .request { bearer in
                    Self.request(activityToken: activityToken, apnsHeaders: apnsHeaders, apsJSON: apsJSON, configuration: configuration, bearer: bearer)
                }
            },
            classify: { PushOutcomeClassifier.apns(status: $0.status, headers: $0.headers, body: $0.body, now: now()) })
    }

    /// The APNs request for a Live Activity push.
    public static func request(
        activityToken: String, apnsHeaders: [String: String], apsJSON: [UInt8], configuration: APNsConfiguration, bearer: String
    ) -> HTTPRequest {
        var headers = HTTPHeaders()
        for (name, value) in apnsHeaders.sorted(by: { $0.key < $1.key }) where name.lowercased().hasPrefix("apns-") {
            headers.set(name.lowercased(), value)
        }
        if headers["apns-priority"] == nil { headers.set("apns-priority", "10") }
        headers.set("apns-push-type", "liveactivity")
        headers.set("apns-topic", configuration.liveActivityTopic)
        headers.set("authorization", "bearer \(bearer)")
        headers.set("content-type", "application/json")
        return HTTPRequest(
            method: .post, url: "\(configuration.baseURL)/3/device/\(activityToken)", headers: headers, body: apsJSON,
            timeout: configuration.requestTimeout)
    }

    static func isHex(_ token: String) -> Bool {
        !token.isEmpty && token.utf8.allSatisfy { byte in
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
        }
    }
}
