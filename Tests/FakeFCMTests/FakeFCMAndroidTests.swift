import Foundation
import Testing
import TestSupport

/// `message.android` checked as FCM checks it, and the Android countdown's data messages checked and recorded.
@Suite struct FakeFCMAndroidTests {
    @Test func countdownMessagesAreAcceptedAndRecordedAsAndroidEvents() async throws {
        let fake = try FakeFCMProcess()
        let client = FakeFCMClient(fake)
        let token = try await client.accessToken(for: fake)
        for (seq, event) in ["start", "update", "end"].enumerated() {
            let answer = try await client.send(Messages.androidCountdown(event: event, seq: seq + 1), bearer: token, project: fake.project)
            #expect(answer.status == 200, "\(event): \(answer.text)")
        }
        #expect(try await client.send(Messages.reminder(), bearer: token, project: fake.project).status == 200)
        let other = ["token": "fcm-android-0001", "data": ["type": "something_else"]] as [String: Any]
        #expect(try await client.send(other, bearer: token, project: fake.project).status == 200)

        let stats = try await client.call("GET", "/fake/stats").json
        #expect(stats["byEvent"] as? [String: Int] == ["android_start": 1, "android_update": 1, "android_end": 1, "notification": 1, "data": 1])
        let android = try await client.call("GET", "/fake/messages?event=android_").array
        #expect(android.map { $0["event"] as? String } == ["android_start", "android_update", "android_end"])
        #expect(android.allSatisfy { $0["token"] as? String == "fcm-android-0001" && $0["liveActivityToken"] == nil })
        let end = try #require(android.last?["message"] as? [String: Any])
        #expect(end["android"] as? [String: String] == ["priority": "HIGH", "ttl": "900s"])
        #expect((end["data"] as? [String: String])?["endedReason"] == "cancelled")
        let ends = try await client.call("GET", "/fake/messages?event=android_end").array
        #expect(ends.count == 1)
    }

    @Test func fcmsDurationsAndOtherAndroidFieldsAreAccepted() async throws {
        let fake = try FakeFCMProcess()
        let client = FakeFCMClient(fake)
        let token = try await client.accessToken(for: fake)
        var reminder = Messages.reminder()
        reminder["android"] = [
            "ttl": "3.5s", "priority": "NORMAL", "collapse_key": "reminder-1", "direct_boot_ok": false, "restricted_package_name": "app",
            "fcm_options": ["analytics_label": "r"], "notification": ["channel_id": "reminders", "tag": "t", "visibility": "PUBLIC"],
        ] as [String: Any]
        let answer = try await client.send(reminder, bearer: token, project: fake.project)
        #expect(answer.status == 200, "\(answer.text)")
        var big = Messages.androidCountdown(event: "start")
        var data = big["data"] as! [String: String]
        data["streamTitle"] = String(repeating: "x", count: 3700)
        big["data"] = data
        #expect(try await client.send(big, bearer: token, project: fake.project).status == 200, "just under 4096 bytes of data")
    }

    typealias Broken = FakeFCMSendTests.Broken

    /// The countdown message of `event` with its `part` ("android" or "data") edited.
    static func edit(_ part: String, _ event: String = "start", _ change: (inout [String: Any]) -> Void) -> [String: Any] {
        var message = Messages.androidCountdown(event: event)
        var object = message[part] as! [String: Any]
        change(&object)
        message[part] = object
        return message
    }

    static func editAndroid(_ event: String = "start", _ change: (inout [String: Any]) -> Void) -> [String: Any] { edit("android", event, change) }
    static func editData(_ event: String = "start", _ change: (inout [String: Any]) -> Void) -> [String: Any] { edit("data", event, change) }

    static let broken: [Broken] = [
        Broken(label: "unknown android field", field: "message.android.time_to_live") { editAndroid { $0["time_to_live"] = "1s" } },
        Broken(label: "lowercase priority", field: "message.android.priority") { editAndroid { $0["priority"] = "high" } },
        Broken(label: "unknown priority", field: "message.android.priority") { editAndroid { $0["priority"] = "URGENT" } },
        Broken(label: "ttl without unit", field: "message.android.ttl") { editAndroid { $0["ttl"] = "412" } },
        Broken(label: "ttl in minutes", field: "message.android.ttl") { editAndroid { $0["ttl"] = "7m" } },
        Broken(label: "ttl as a number", field: "message.android.ttl") { editAndroid { $0["ttl"] = 412 } },
        Broken(label: "ttl of ten fractional digits", field: "message.android.ttl") { editAndroid { $0["ttl"] = "1.0123456789s" } },
        Broken(label: "ttl over 4 weeks", field: "message.android.ttl") { editAndroid { $0["ttl"] = "2419201s" } },
        Broken(label: "numeric collapse key", field: "message.android.collapse_key") { editAndroid { $0["collapse_key"] = 7 } },
        Broken(label: "string direct_boot_ok", field: "message.android.direct_boot_ok") { editAndroid { $0["direct_boot_ok"] = "true" } },
        Broken(label: "unknown notification field", field: "message.android.notification.colour") {
            var m = Messages.reminder(); m["android"] = ["notification": ["colour": "#fff"]]; return m
        },
        Broken(label: "numeric channel id", field: "message.android.notification.channel_id") {
            var m = Messages.reminder(); m["android"] = ["notification": ["channel_id": 3]]; return m
        },
        Broken(label: "numeric data value", field: "message.data.seq") { editData { $0["seq"] = 1 } },
        Broken(label: "data over 4096 bytes", field: "message.data") { editData { $0["streamTitle"] = String(repeating: "x", count: 4000) } },
        Broken(label: "countdown with a notification block", field: "message.android.notification") {
            editAndroid { $0["notification"] = ["title": "x"] }
        },
        Broken(label: "countdown without android options", field: "message.android") {
            var m = Messages.androidCountdown(event: "start"); m["android"] = nil; return m
        },
        Broken(label: "unknown countdown event", field: "message.data.event") { editData { $0["event"] = "begin" } },
        Broken(label: "millisecond timestamp", field: "message.data.timestamp") { editData { $0["timestamp"] = "1776705330000" } },
        Broken(label: "non-decimal scheduledStartAt", field: "message.data.scheduledStartAt") { editData { $0["scheduledStartAt"] = "1.7e9" } },
        Broken(label: "seq zero", field: "message.data.seq") { editData { $0["seq"] = "0" } },
        Broken(label: "start without staleAt", field: "message.data.staleAt") { editData { $0["staleAt"] = nil } },
        Broken(label: "unknown role", field: "message.data.role") { editData { $0["role"] = "host" } },
        Broken(label: "start at normal priority", field: "message.android.priority") { editAndroid { $0["priority"] = "NORMAL" } },
        Broken(label: "start without collapse key", field: "message.android.collapse_key") { editAndroid { $0["collapse_key"] = nil } },
        Broken(label: "collapsible end", field: "message.android.collapse_key") { editAndroid("end") { $0["collapse_key"] = "countdown-1" } },
        Broken(label: "end without reason", field: "message.data.endedReason") { editData("end") { $0["endedReason"] = nil } },
        Broken(label: "end without dismissAt", field: "message.data.dismissAt") { editData("end") { $0["dismissAt"] = nil } },
        Broken(label: "token only", field: "message") { ["token": "t"] },
    ]

    /// The same INVALID_ARGUMENT answer, field violation and nothing recorded as for the other broken messages.
    @Test(arguments: broken)
    func brokenAndroidMessagesGetInvalidArgument(_ broken: Broken) async throws {
        try await FakeFCMSendTests().invalidMessagesGetFCMsInvalidArgument(broken)
    }
}
