import BlockingIO
import Foundation
import Push
import Testing

/// The Android countdown's FCM data message (SPEC 10.4) through the request body, the log transport, the routing
/// of `PUSH_TRANSPORT=apns` and a real FCM transport.
@Suite struct AndroidDataMessageTests {
    static let data = ["type": "stream_countdown", "event": "start", "streamId": "s1", "seq": "1", "title": "Yayın \"yakında\""]

    /// Every field of SPEC 10.4, as `countdown-fake-fcm` checks a countdown message.
    static let completeData = data.merging([
        "body": "10 dakika", "streamTitle": "Akşam yayını", "deepLink": "countdown://streams/s1", "creatorName": "Ayşe", "role": "creator",
        "scheduledStartAt": "1776384600", "timestamp": "1776384000", "staleAt": "1776413400", "viewerCount": "0",
    ]) { $1 }

    static func start(
        token: String = "fcm-android-0123456789", collapseKey: String? = "countdown-0123456789abcdef", data: [String: String] = data
    ) -> PushMessage {
        .androidData(id: "start:s1:d1", fcmToken: token, options: AndroidMessageOptions(priority: .high, ttlSeconds: 412, collapseKey: collapseKey),
                     data: data)
    }

    @Test func bodyIsADataMessageWithAndroidOptions() throws {
        let body = try #require(FCMRequestBody.encode(Self.start()))
        let text = String(decoding: body, as: UTF8.self)
        #expect(text == #"{"message":{"token":"fcm-android-0123456789","android":{"priority":"HIGH","ttl":"412s","collapse_key":"countdown-0123456789abcdef"},"data":{"event":"start","seq":"1","streamId":"s1","title":"Yayın \"yakında\"","type":"stream_countdown"}}}"#)
        let message = try #require((try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])?["message"] as? [String: Any])
        #expect(message["notification"] == nil, "a notification block would make FCM post a notification of its own")
        #expect(message["apns"] == nil)
        #expect(message["data"] as? [String: String] == Self.data)
    }

    @Test func anEndHasNoCollapseKeyAndNormalIsSpelledAsFCMWants() throws {
        let end = PushMessage.androidData(id: "end:s1:d1", fcmToken: "t", options: AndroidMessageOptions(priority: .normal, ttlSeconds: 900),
                                          data: ["event": "end"])
        let text = String(decoding: try #require(FCMRequestBody.encode(end)), as: UTF8.self)
        #expect(text.contains(#""android":{"priority":"NORMAL","ttl":"900s"},"#))
        #expect(!text.contains("collapse_key"))
    }

    @Test func theLogTransportPrintsTheOptionsAndDataWithAShortenedToken() async throws {
        let lines = Locked<[String]>([])
        let transport = LogTransport { line in lines.withLock { $0.append(line) } }
        #expect(await transport.send(Self.start()) == .accepted(messageName: "log/start:s1:d1"))
        let line = try #require(lines.value.first)
        #expect(!line.contains("fcm-android-0123456789") && line.contains("…23456789"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["push"] as? String == "android_data")
        #expect(object["id"] as? String == "start:s1:d1")
        #expect(object["android"] as? [String: String] == ["priority": "HIGH", "ttl": "412s", "collapse_key": "countdown-0123456789abcdef"])
        #expect(object["data"] as? [String: String] == Self.data)
    }

    /// With PUSH_TRANSPORT=apns, Android data messages go through the FCM transport, as reminders do.
    @Test func routingSendsAndroidDataMessagesThroughFCM() async {
        let activities = PushBatchSendTests.BatchRecorder { .accepted(messageName: "apns:" + $0.id) }
        let fcm = PushBatchSendTests.BatchRecorder { .accepted(messageName: "fcm:" + $0.id) }
        let transport = RoutingTransport(liveActivities: activities, notifications: fcm)
        let live = PushMessage.liveActivity(id: "ios", fcmToken: "f", activityToken: "a", apnsHeaders: [:], apsJSON: Array("{}".utf8))
        let results = await transport.sendAll([live, Self.start()])
        #expect(results == [.accepted(messageName: "apns:ios"), .accepted(messageName: "fcm:start:s1:d1")])
        #expect(fcm.batches.value == [["start:s1:d1"]])
        #expect(await transport.send(Self.start()) == .accepted(messageName: "fcm:start:s1:d1"))
    }

    @Test func theFCMTransportSendsItAndADeadTokenNamesTheFCMToken() async throws {
        let harness = try await FCMHarness.make()
        guard case .accepted = await harness.transport.send(Self.start(token: "ok-android", data: Self.completeData)) else {
            Issue.record("not accepted")
            return
        }
        let body = try #require(try await harness.sends().first?.body)
        #expect(body.contains(#""android":{"priority":"HIGH","ttl":"412s""#))
        try await harness.control.fault(["token": "unregistered-android", "status": 404, "errorCode": "UNREGISTERED"])
        let dead = await harness.transport.send(Self.start(token: "unregistered-android", data: Self.completeData))
        guard case .tokenRefused(let refusal) = dead else {
            Issue.record("got \(dead)")
            return
        }
        #expect(refusal.token == .fcm && refusal.reason == "UNREGISTERED")
    }
}
