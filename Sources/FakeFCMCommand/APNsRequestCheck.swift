import Foundation
import HTTPServer
import JSON

/// The checks APNs makes on a push or broadcast before it takes it: each failure is Apple's status and `reason`
/// (`BadPayload` is the fake's own, for a body APNs could not deliver as a Live Activity push).
enum APNsRequestCheck {
    static let pushTypes: Set<String> = [
        "alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity", "pushtotalk", "widgets",
    ]
    static let maxPayloadBytes = 4096

    /// `apns-priority`, `apns-expiration`, `apns-collapse-id` and `apns-id` when present.
    static func commonHeaders(_ request: HTTPRequest) -> APNsRefusal? {
        if let priority = request.headers["apns-priority"], !["1", "5", "10"].contains(priority) { return bad("BadPriority") }
        if let expiration = request.headers["apns-expiration"], expiration.isEmpty || !expiration.utf8.allSatisfy({ (48...57).contains($0) }) {
            return bad("BadExpirationDate")
        }
        if let collapse = request.headers["apns-collapse-id"], collapse.utf8.count > 64 { return bad("BadCollapseId") }
        if let id = request.headers["apns-id"], UUID(uuidString: id) == nil { return bad("BadMessageId") }
        return nil
    }

    /// A token push's `apns-push-type` and `apns-topic` for the app `bundleID`.
    static func deviceHeaders(_ request: HTTPRequest, bundleID: String) -> APNsRefusal? {
        let pushType = request.headers["apns-push-type"]
        if let pushType, !pushTypes.contains(pushType) { return bad("InvalidPushType") }
        guard let topic = request.headers["apns-topic"], !topic.isEmpty else { return bad("MissingTopic") }
        let liveActivityTopic = bundleID + ".push-type.liveactivity"
        guard topic == bundleID || topic.hasPrefix(bundleID + ".") else { return bad("TopicDisallowed") }
        if (pushType == "liveactivity") != (topic == liveActivityTopic) { return bad("InvalidPushType") }
        return commonHeaders(request)
    }

    /// A broadcast's headers: `apns-push-type: liveactivity` and a channel id.
    static func broadcastHeaders(_ request: HTTPRequest) -> APNsRefusal? {
        guard request.headers["apns-push-type"] == "liveactivity" else { return bad("InvalidPushType") }
        if let refusal = channelID(request) { return refusal }
        return commonHeaders(request)
    }

    /// The `apns-channel-id` header's presence and form (not whether the channel exists).
    static func channelID(_ request: HTTPRequest) -> APNsRefusal? {
        guard let id = request.headers["apns-channel-id"], !id.isEmpty else { return bad("MissingChannelId") }
        return ChannelRegistry.isWellFormed(id) ? nil : bad("BadChannelId")
    }

    /// The body: a JSON object with an `aps` object at most 4 KiB; a Live Activity push (`liveactivity`) also needs
    /// `aps.event` (start, update, end) and an integer `aps.timestamp`.
    static func payload(_ body: Data, liveActivity: Bool) -> Result<JSONValue, APNsRefusal> {
        guard !body.isEmpty else { return .failure(bad("PayloadEmpty")) }
        guard body.count <= maxPayloadBytes else { return .failure(.init(status: 413, reason: "PayloadTooLarge")) }
        guard let payload = JSONValue.parse(body), let aps = payload["aps"], aps.object != nil else { return .failure(bad("BadPayload")) }
        if liveActivity {
            guard let event = aps["event"]?.string, ["start", "update", "end"].contains(event), aps["timestamp"]?.int != nil else {
                return .failure(bad("BadPayload"))
            }
        }
        return .success(payload)
    }

    /// The channel creation body: `{"message-storage-policy": 0|1, "push-type": "LiveActivity"}`.
    static func channelConfiguration(_ body: Data) -> Result<Int, APNsRefusal> {
        let configuration = JSONValue.parse(body)
        guard let policy = configuration?["message-storage-policy"]?.int, policy == 0 || policy == 1 else {
            return .failure(bad("BadMessageStoragePolicy"))
        }
        guard configuration?["push-type"]?.string == "LiveActivity" else { return .failure(bad("InvalidPushType")) }
        return .success(policy)
    }

    /// A hexadecimal device token.
    static func isDeviceToken(_ token: String) -> Bool {
        !token.isEmpty && token.count % 2 == 0 && token.utf8.allSatisfy { byte in
            (48...57).contains(byte) || (97...102).contains(byte) || (65...70).contains(byte)
        }
    }

    private static func bad(_ reason: String) -> APNsRefusal { .init(status: 400, reason: reason) }
}
