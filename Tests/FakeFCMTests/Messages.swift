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

    /// An Android countdown data message as the worker builds it (SPEC 10.4).
    static func androidCountdown(event: String, token: String = "fcm-android-0001", seq: Int = 1) -> [String: Any] {
        var data: [String: String] = [
            "type": "stream_countdown", "event": event, "streamId": "s1", "scheduledStartAt": "1776708000", "timestamp": "1776705330",
            "title": "Yayının yaklaşıyor", "body": "Akşam Sohbeti 45 dakika sonra başlıyor", "streamTitle": "Akşam Sohbeti",
            "creatorName": "Selin Kaya • Mert Demir", "role": "guest", "deepLink": "allmine://live-stream/s1", "viewerCount": "0",
            "seq": String(seq),
        ]
        var android: [String: Any] = ["priority": "HIGH", "ttl": "2670s", "collapse_key": "countdown-87f2b0179c856f65"]
        if event == "end" {
            data["endedReason"] = "cancelled"
            data["dismissAt"] = "1776706230"
            data["title"] = "Yayın iptal edildi"
            data["body"] = "Ana sayfaya dönmek için dokun"
            android = ["priority": "HIGH", "ttl": "900s"]
        } else {
            data["staleAt"] = "1776711600"
        }
        if event == "update" { android["priority"] = "NORMAL" }
        return ["token": token, "android": android, "data": data]
    }
}
