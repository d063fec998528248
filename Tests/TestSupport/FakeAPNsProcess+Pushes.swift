import Foundation

/// One push or broadcast the fake APNs accepted (`GET /fake/messages`).
public struct APNsPush: @unchecked Sendable {
    public let seq: Int
    public let receivedAt: Double
    /// `device` (a token push) or `broadcast`.
    public let kind: String
    /// `aps.event`.
    public let event: String
    /// The device token of a token push.
    public let token: String?
    /// The channel of a broadcast.
    public let channelID: String?
    /// `apns-*` request headers, lower-case names.
    public let headers: [String: String]
    /// The JSON body.
    public let payload: [String: Any]

    public var aps: [String: Any] { payload["aps"] as? [String: Any] ?? [:] }
    public var contentState: [String: Any] { aps["content-state"] as? [String: Any] ?? [:] }

    init(_ object: [String: Any]) {
        seq = object["seq"] as? Int ?? 0
        receivedAt = object["receivedAt"] as? Double ?? 0
        kind = object["kind"] as? String ?? ""
        event = object["event"] as? String ?? ""
        token = object["token"] as? String
        channelID = object["channelId"] as? String
        headers = object["headers"] as? [String: String] ?? [:]
        payload = object["payload"] as? [String: Any] ?? [:]
    }
}

extension FakeAPNsProcess {
    /// The accepted pushes and broadcasts the fake keeps, oldest first (`kind`: `device` or `broadcast`).
    public func pushes(kind: String? = nil) async throws -> [APNsPush] {
        let answer = try await control.call("GET", "/fake/messages" + (kind.map { "?kind=\($0)" } ?? ""))
        guard answer.status == 200, let objects = try JSONSerialization.jsonObject(with: answer.body) as? [[String: Any]] else {
            throw UnexpectedAnswer(what: "GET /fake/messages", answer: answer.text)
        }
        return objects.map(APNsPush.init)
    }

    /// Polls the accepted pushes until `condition` holds; returns them.
    @discardableResult
    public func waitForPushes(timeout: Duration = .seconds(20), _ what: String, _ condition: @escaping ([APNsPush]) -> Bool) async throws -> [APNsPush] {
        var latest: [APNsPush] = []
        try await waitUntil(timeout: timeout, every: .milliseconds(50), "\(what) at the fake APNs (log: \(stderrPath))") {
            latest = try await self.pushes()
            return condition(latest)
        }
        return latest
    }
}
