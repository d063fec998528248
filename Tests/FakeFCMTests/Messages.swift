/// Message bodies as the worker builds them (spec §6).
enum Messages {
    static func liveActivity(event: String, token: String = "fcm-token-0001", activityToken: String = "activity-token-0001") -> [String: Any] {
        var aps: [String: Any] = [
            "timestamp": 1_776_384_000, "event": event,
            "content-state": [
                "streamId": "s1", "statusText": "Yayına kalan süre", "updatedAt": 1_776_384_000,
                "scheduledStartAt": 1_776_708_000, "displayState": event == "end" ? "ended" : "countdown",
            ] as [String: Any],
        ]
        switch event {
        case "start":
            aps["attributes-type"] = "AllmineLiveActivityAttributes"
            aps["attributes"] = ["streamId": "s1", "role": "creator", "deepLink": "allmine://live-stream/s1"]
            aps["stale-date"] = 1_776_711_600
            aps["input-push-token"] = 1
            aps["alert"] = ["title": "Stream", "body": "45 dakika sonra başlıyor"]
        case "end":
            aps["dismissal-date"] = 1_776_385_000
        default:
            break
        }
        return [
            "token": token,
            "apns": [
                "live_activity_token": activityToken,
                "headers": ["apns-priority": "10", "apns-expiration": "1776708000"],
                "payload": ["aps": aps],
            ] as [String: Any],
        ]
    }

    static func reminder(token: String = "fcm-token-0001") -> [String: Any] {
        [
            "token": token,
            "notification": ["title": "Yayın başlıyor", "body": "10 dakika kaldı"],
            "data": ["type": "stream_reminder", "streamId": "s1", "deepLink": "allmine://live-stream/s1"],
            "android": ["ttl": "412s", "collapse_key": "reminder-0123456789abcdef", "notification": ["channel_id": "stream_reminders"]],
            "apns": ["headers": ["apns-expiration": "1776708000", "apns-collapse-id": "reminder-0123456789abcdef"],
                     "payload": ["aps": ["sound": "default"]]] as [String: Any],
        ] as [String: Any]
    }
}
