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

    public func send(_ message: PushMessage) async -> PushResult {
        await sendAll([message])[0]
    }

    /// Sends the batch through one `sendAll` of the HTTP client; messages APNs cannot take are answered without a
    /// request.
    public func sendAll(_ messages: [PushMessage], onAnswer: PushAnswerHook?) async -> [PushResult] {
        var results = [PushResult?](repeating: nil, count: messages.count)
        var requests: [(index: Int, activityToken: String, apnsHeaders: [String: String], apsJSON: [UInt8])] = []
        for (index, message) in messages.enumerated() {
            guard case let .liveActivity(_, activityToken, apnsHeaders, apsJSON) = message.content else {
                results[index] = .rejected(reason: "APNs transport sends Live Activity pushes only; notifications go through FCM")
                continue
            }
            guard Self.isHex(activityToken) else {
                results[index] = .tokenRefused(TokenRefusal(
                    token: .activity, reason: "not hexadecimal", suspect: "the app's Live Activity token registration",
                    misconfigurationShaped: false))
                continue
            }
            guard FCMRequestBody.isJSONObject(apsJSON) else {
                results[index] = .rejected(reason: "the aps payload is not a JSON object")
                continue
            }
            requests.append((index, activityToken, apnsHeaders, apsJSON))
        }
        if !requests.isEmpty {
            let (configuration, now) = (self.configuration, self.now)
            let sent = await AuthenticatedSend(service: "APNs", tokens: tokens, http: http).runAll(
                count: requests.count, onAnswer: onAnswer,
                request: { index, bearer in
                    let slot = requests[index]
                    return Self.request(
                        activityToken: slot.activityToken, apnsHeaders: slot.apnsHeaders, apsJSON: slot.apsJSON,
                        configuration: configuration, bearer: bearer)
                },
                classify: { PushOutcomeClassifier.apns(status: $0.status, headers: $0.headers, body: $0.body, now: now()) })
            for (slot, result) in zip(requests, sent) { results[slot.index] = result }
        }
        return results.map { $0! }
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
