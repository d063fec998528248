import BlockingIO
import Foundation
import Push
import Testing

@Suite struct FCMRequestBodyTests {
    static let aps = Array(#"{"aps":{"event":"start","timestamp":1776384000,"alert":{"title":"Yayın","body":"45 dakika"}}}"#.utf8)

    @Test func liveActivityBodySplicesTheApsObject() throws {
        let message = PushMessage.liveActivity(
            id: "start:s1:d1", fcmToken: "fcm\"tok", activityToken: "abc123",
            apnsHeaders: ["apns-priority": "10", "apns-expiration": "1776708000"], apsJSON: Self.aps)
        let body = try #require(FCMRequestBody.encode(message))
        let expected = #"{"message":{"token":"fcm\"tok","apns":{"live_activity_token":"abc123","headers":{"apns-expiration":"1776708000","apns-priority":"10"},"payload":"#
            + String(decoding: Self.aps, as: UTF8.self) + "}}}"
        #expect(String(decoding: body, as: UTF8.self) == expected)
        #expect(try JSONSerialization.jsonObject(with: Data(body)) is [String: Any])
    }

    @Test func notificationBodyEscapesStrings() throws {
        let message = PushMessage.notification(
            id: "reminder:s1", fcmToken: "tok", title: "Yayın \"Canlı\"\nşimdi", body: "tab\there \\ \u{01} 🎉",
            data: ["type": "stream_reminder", "streamId": "s1", "deepLink": "allmine://live-stream/s1"])
        let body = try #require(FCMRequestBody.encode(message))
        let text = String(decoding: body, as: UTF8.self)
        #expect(text.contains(#""title":"Yayın \"Canlı\"\nşimdi","body":"tab\there \\ \u0001 🎉""#))
        #expect(text.hasSuffix(#""apns":{"payload":{"aps":{"sound":"default"}}}}}"#))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        let inner = try #require(object["message"] as? [String: Any])
        let notification = try #require(inner["notification"] as? [String: String])
        #expect(notification["title"] == "Yayın \"Canlı\"\nşimdi")
        #expect(notification["body"] == "tab\there \\ \u{01} 🎉")
        #expect(inner["data"] as? [String: String] == ["type": "stream_reminder", "streamId": "s1", "deepLink": "allmine://live-stream/s1"])
        #expect(inner["token"] as? String == "tok")
    }

    @Test func notificationOptionsBecomeAndroidAndAPNsFields() throws {
        let options = NotificationOptions(apnsExpiration: 1_776_708_000, collapseID: "reminder-0123456789abcdef", androidTTLSeconds: 412,
                                          androidChannelID: "stream_reminders", androidTag: "reminder-0123456789abcdef")
        let message = PushMessage.notification(id: "reminder:s1", fcmToken: "tok", title: "T", body: "B", data: [:], options: options)
        let body = try #require(FCMRequestBody.encode(message))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        let inner = try #require(object["message"] as? [String: Any])
        let android = try #require(inner["android"] as? [String: Any])
        #expect(android["ttl"] as? String == "412s")
        #expect(android["collapse_key"] as? String == "reminder-0123456789abcdef")
        #expect((android["notification"] as? [String: String]) == ["channel_id": "stream_reminders", "tag": "reminder-0123456789abcdef"])
        #expect(String(decoding: body, as: UTF8.self) == #"{"message":{"token":"tok","notification":{"title":"T","body":"B"},"data":{},"#
            + #""android":{"ttl":"412s","collapse_key":"reminder-0123456789abcdef","notification":{"channel_id":"stream_reminders","#
            + #""tag":"reminder-0123456789abcdef"}},"apns":{"headers":{"apns-collapse-id":"reminder-0123456789abcdef","#
            + #""apns-expiration":"1776708000"},"payload":{"aps":{"sound":"default"}}}}}"#)
        let apns = try #require(inner["apns"] as? [String: Any])
        #expect(apns["headers"] as? [String: String] == ["apns-expiration": "1776708000", "apns-collapse-id": "reminder-0123456789abcdef"])
        #expect(((apns["payload"] as? [String: Any])?["aps"] as? [String: String]) == ["sound": "default"])

        let noChannel = PushMessage.notification(id: "r", fcmToken: "tok", title: "T", body: "B", data: [:],
                                                 options: NotificationOptions(androidTTLSeconds: 1))
        let text = String(decoding: try #require(FCMRequestBody.encode(noChannel)), as: UTF8.self)
        #expect(text.contains(#""android":{"ttl":"1s"}"#))
        #expect(!text.contains("channel_id") && !text.contains("headers") && !text.contains("notification\":{\"tag"))

        let tagOnly = PushMessage.notification(id: "r", fcmToken: "tok", title: "T", body: "B", data: [:],
                                               options: NotificationOptions(androidTag: "reminder-0123456789abcdef"))
        let tagged = String(decoding: try #require(FCMRequestBody.encode(tagOnly)), as: UTF8.self)
        #expect(tagged.contains(#""android":{"notification":{"tag":"reminder-0123456789abcdef"}}"#))
    }

    @Test func invalidApsIsRefused() {
        for aps in ["", "not json", "[1]", #"{"aps":"#] {
            let message = PushMessage.liveActivity(id: "x", fcmToken: "t", activityToken: "a", apnsHeaders: [:], apsJSON: Array(aps.utf8))
            #expect(FCMRequestBody.encode(message) == nil)
        }
    }

    @Test func logTransportPrintsOneLineWithShortenedTokens() async throws {
        let lines = Locked<[String]>([])
        let transport = LogTransport { line in lines.withLock { $0.append(line) } }
        let message = PushMessage.liveActivity(
            id: "end:s1:d1", fcmToken: "fcm-token-0123456789ABCDEF", activityToken: "aaaabbbbccccdddd11112222",
            apnsHeaders: ["apns-priority": "10"], apsJSON: Self.aps)
        #expect(await transport.send(message) == .accepted(messageName: "log/end:s1:d1"))
        let line = try #require(lines.value.first)
        #expect(!line.contains("\n"))
        #expect(!line.contains("fcm-token-0123456789ABCDEF") && !line.contains("aaaabbbbccccdddd11112222"))
        #expect(line.contains("…89ABCDEF") && line.contains("…11112222"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["push"] as? String == "live_activity")
        #expect(((object["payload"] as? [String: Any])?["aps"] as? [String: Any])?["event"] as? String == "start")

        _ = await transport.send(.notification(id: "r1", fcmToken: "short", title: "T", body: "B", data: ["k": "v"]))
        let second = try #require(try JSONSerialization.jsonObject(with: Data(lines.value[1].utf8)) as? [String: Any])
        #expect(second["fcm_token"] as? String == "…", "a token of 16 characters or fewer is masked whole")
        #expect(second["data"] as? [String: String] == ["k": "v"])
        #expect(lines.value[1] == #"{"push":"notification","id":"r1","fcm_token":"…","title":"T","body":"B","data":{"k":"v"}}"#)
        #expect(line.hasPrefix(#"{"push":"live_activity","id":"end:s1:d1","fcm_token":"…89ABCDEF","activity_token":"…11112222","#
            + #""apns_headers":{"apns-priority":"10"},"payload":{"aps":"#))
    }
}
