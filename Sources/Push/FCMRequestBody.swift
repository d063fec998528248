import Foundation

/// The JSON body of an FCM HTTP v1 `messages:send` request (SPEC 6).
public enum FCMRequestBody {
    /// Builds the body; nil when a live activity's `apsJSON` is not a JSON object (nothing should be sent).
    public static func encode(_ message: PushMessage) -> [UInt8]? {
        var json = JSONWriter()
        switch message.content {
        case let .liveActivity(fcmToken, activityToken, apnsHeaders, apsJSON):
            guard isJSONObject(apsJSON) else { return nil }
            json.raw("{\"message\":{\"token\":")
            json.string(fcmToken)
            json.raw(",\"apns\":{\"live_activity_token\":")
            json.string(activityToken)
            json.raw(",\"headers\":")
            json.object(apnsHeaders)
            json.raw(",\"payload\":")
            json.raw(apsJSON)
            json.raw("}}}")
        case let .notification(fcmToken, title, body, data):
            json.raw("{\"message\":{\"token\":")
            json.string(fcmToken)
            json.raw(",\"notification\":{\"title\":")
            json.string(title)
            json.raw(",\"body\":")
            json.string(body)
            json.raw("},\"data\":")
            json.object(data)
            json.raw(",\"apns\":{\"payload\":{\"aps\":{\"sound\":\"default\"}}}}}")
        }
        return json.bytes
    }

    static func isJSONObject(_ bytes: [UInt8]) -> Bool {
        (try? JSONSerialization.jsonObject(with: Data(bytes))) is [String: Any]
    }
}
