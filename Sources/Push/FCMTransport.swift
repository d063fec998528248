import Foundation
import HTTPClient

/// Sends pushes through FCM HTTP v1: `POST {base}/v1/projects/{project}/messages:send`, one request per message,
/// a batch handed to the HTTP client at once.
/// A 401 forces one token refresh and one retry; a second 401 is a configuration error.
public struct FCMTransport: PushTransport {
    public let projectID: String
    /// `{base}/v1/projects/{project}/messages:send`.
    public let endpoint: String
    private let tokens: any AccessTokenProviding
    private let http: any HTTPRequestSending
    private let requestTimeout: Duration
    private let now: @Sendable () -> Date

    public static let defaultBaseURL = "https://fcm.googleapis.com"

    public init(
        projectID: String, baseURL: String = FCMTransport.defaultBaseURL, tokens: any AccessTokenProviding,
        http: any HTTPRequestSending, requestTimeout: Duration = .seconds(10), now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.projectID = projectID
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        let project = projectID.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? projectID
        endpoint = "\(base)/v1/projects/\(project)/messages:send"
        self.tokens = tokens
        self.http = http
        self.requestTimeout = requestTimeout
        self.now = now
    }

    /// Sends the batch through one `sendAll` of the HTTP client (messages whose body cannot be built are rejected
    /// without a request).
    public func sendAll(_ messages: [PushMessage], onAnswer: PushAnswerHook?) async -> [PushResult] {
        let (endpoint, timeout, now) = (self.endpoint, requestTimeout, self.now)
        return await AuthenticatedSend.fcm(tokens: tokens, http: http).runAll(
            messages, onAnswer: onAnswer,
            prepare: { message in
                guard let body = FCMRequestBody.encode(message) else { return .answered(.rejected(reason: "the aps payload is not a JSON object")) }
                return .request { bearer in
                    HTTPRequest(
                        method: .post, url: endpoint,
                        headers: ["Authorization": "Bearer \(bearer)", "Content-Type": "application/json; charset=UTF-8"],
                        body: body, timeout: timeout)
                }
            },
            classify: { PushOutcomeClassifier.fcm(status: $0.status, headers: $0.headers, body: $0.body, now: now()) })
    }
}
