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

    public func send(_ message: PushMessage) async -> PushResult {
        await sendAll([message])[0]
    }

    /// Sends the batch through one `sendAll` of the HTTP client (messages whose body cannot be built are rejected
    /// without a request).
    public func sendAll(_ messages: [PushMessage], onAnswer: PushAnswerHook?) async -> [PushResult] {
        var results = [PushResult?](repeating: nil, count: messages.count)
        var bodies: [(index: Int, body: [UInt8])] = []
        bodies.reserveCapacity(messages.count)
        for (index, message) in messages.enumerated() {
            if let body = FCMRequestBody.encode(message) {
                bodies.append((index, body))
            } else {
                results[index] = .rejected(reason: "the aps payload is not a JSON object")
            }
        }
        if !bodies.isEmpty {
            let (endpoint, timeout, now) = (self.endpoint, requestTimeout, self.now)
            let sent = await AuthenticatedSend(service: "FCM", tokens: tokens, http: http).runAll(
                count: bodies.count, onAnswer: onAnswer,
                request: { index, bearer in
                    HTTPRequest(
                        method: .post, url: endpoint,
                        headers: ["Authorization": "Bearer \(bearer)", "Content-Type": "application/json; charset=UTF-8"],
                        body: bodies[index].body, timeout: timeout)
                },
                classify: { PushOutcomeClassifier.fcm(status: $0.status, headers: $0.headers, body: $0.body, now: now()) })
            for (slot, result) in zip(bodies, sent) { results[slot.index] = result }
        }
        return results.map { $0! }
    }
}
