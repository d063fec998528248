import Foundation
import HTTPClient

/// Sends pushes through FCM HTTP v1: `POST {base}/v1/projects/{project}/messages:send`, one request per message.
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

    public func send(_ message: PushMessage) async -> PushResult {
        guard let body = FCMRequestBody.encode(message) else {
            return .rejected(reason: "the aps payload is not a JSON object")
        }
        let endpoint = self.endpoint
        let timeout = requestTimeout
        return await AuthenticatedSend(service: "FCM", tokens: tokens, http: http).run(
            request: { bearer in
                HTTPRequest(
                    method: .post, url: endpoint,
                    headers: ["Authorization": "Bearer \(bearer)", "Content-Type": "application/json; charset=UTF-8"],
                    body: body, timeout: timeout)
            },
            classify: { PushOutcomeClassifier.fcm(status: $0.status, headers: $0.headers, body: $0.body, now: now()) })
    }
}
