import Foundation

/// A message the fake FCM accepted, with accessors for what the tests check.
public struct RecordedPush: Sendable {
    public let seq: Int
    public let event: String
    public let fcmToken: String
    public let activityToken: String?
    public let receivedAt: Date
    /// The whole `message` object as JSON.
    public let message: Data

    public static func decode(_ body: Data) throws -> [RecordedPush] {
        guard let list = try JSONSerialization.jsonObject(with: body) as? [[String: Any]] else { return [] }
        return try list.map { item in
            RecordedPush(
                seq: item["seq"] as? Int ?? 0, event: item["event"] as? String ?? "", fcmToken: item["token"] as? String ?? "",
                activityToken: item["liveActivityToken"] as? String,
                receivedAt: Date(timeIntervalSince1970: item["receivedAt"] as? Double ?? 0),
                message: try JSONSerialization.data(withJSONObject: item["message"] ?? [:]))
        }
    }

    private var object: [String: Any] { (try? JSONSerialization.jsonObject(with: message)) as? [String: Any] ?? [:] }

    public var aps: [String: Any] {
        let apns = object["apns"] as? [String: Any]
        let payload = apns?["payload"] as? [String: Any]
        return payload?["aps"] as? [String: Any] ?? [:]
    }

    public var contentState: [String: Any] { aps["content-state"] as? [String: Any] ?? [:] }
    public var attributes: [String: Any] { aps["attributes"] as? [String: Any] ?? [:] }
    public var notification: [String: String] { object["notification"] as? [String: String] ?? [:] }
    public var data: [String: String] { object["data"] as? [String: String] ?? [:] }
    public var streamID: String? { contentState["streamId"] as? String ?? data["streamId"] }
}

extension Array where Element == RecordedPush {
    public func events(_ event: String, stream: String? = nil) -> [RecordedPush] {
        filter { $0.event == event && (stream == nil || $0.streamID == stream) }
    }
}
