import Foundation
import Testing
import TestSupport

@Suite struct FakeFCMSendTests {
    @Test func sendsNeedALiveBearerTokenAndTheAccountsProject() async throws {
        let fake = try FakeFCMProcess()
        let client = FakeFCMClient(fake)
        let token = try await client.accessToken(for: fake)

        let missing = try await client.send(Messages.reminder(), bearer: nil, project: fake.project)
        #expect(missing.status == 401)
        #expect(missing.json["error"].flatMap { ($0 as? [String: Any])?["status"] as? String } == "UNAUTHENTICATED")
        let unknown = try await client.send(Messages.reminder(), bearer: "ya29.made-up", project: fake.project)
        #expect(unknown.status == 401)
        let error = try #require(unknown.json["error"] as? [String: Any])
        #expect(error["code"] as? Int == 401)
        #expect((error["message"] as? String)?.isEmpty == false)

        let otherProject = try await client.send(Messages.reminder(), bearer: token, project: "someone-else")
        #expect(otherProject.status == 403)
        #expect((otherProject.json["error"] as? [String: Any])?["status"] as? String == "PERMISSION_DENIED")

        let accepted = try await client.send(Messages.reminder(), bearer: token, project: fake.project)
        #expect(accepted.status == 200)
        #expect(accepted.json["name"] as? String == "projects/\(fake.project)/messages/fake-1")

        let stats = try await client.call("GET", "/fake/stats").json
        #expect(stats["accepted"] as? Int == 1)
        #expect(stats["rejected"] as? Int == 3)
        #expect(stats["byStatus"] as? [String: Int] == ["200": 1, "401": 2, "403": 1])
        #expect(try await client.call("GET", "/fake/messages").array.count == 1)
    }

    @Test func acceptsEveryPushKindAndCountsThemByEvent() async throws {
        let fake = try FakeFCMProcess()
        let client = FakeFCMClient(fake)
        let token = try await client.accessToken(for: fake)
        for message in [
            Messages.liveActivity(event: "start"), Messages.liveActivity(event: "update"), Messages.liveActivity(event: "end"),
            Messages.liveActivity(event: "end"), Messages.reminder(),
        ] {
            let answer = try await client.send(message, bearer: token, project: fake.project)
            #expect(answer.status == 200, "\(answer.text)")
        }
        let validateOnly = try await client.send(Messages.reminder(), bearer: token, project: fake.project, extra: ["validate_only": true])
        #expect(validateOnly.json["name"] as? String == "projects/\(fake.project)/messages/fake_message_id")
        let stats = try await client.call("GET", "/fake/stats").json
        #expect(stats["byEvent"] as? [String: Int] == ["start": 1, "update": 1, "end": 2, "notification": 1])
        #expect(stats["validatedOnly"] as? Int == 1)
        let recorded = try await client.call("GET", "/fake/messages").array
        #expect(recorded.map { $0["event"] as? String } == ["start", "update", "end", "end", "notification"])
        #expect(recorded[0]["liveActivityToken"] as? String == "activity-token-0001")
        #expect(recorded[0]["token"] as? String == "fcm-token-0001")
        let aps = ((recorded[0]["message"] as? [String: Any])?["apns"] as? [String: Any])?["payload"] as? [String: Any]
        #expect((aps?["aps"] as? [String: Any])?["stale-date"] as? Int == 1_776_711_600)
    }

    /// A broken message and the field FCM would name.
    struct Broken: CustomTestStringConvertible, Sendable {
        let label: String
        let field: String
        let make: @Sendable () -> [String: Any]
        var testDescription: String { label }
    }

    static let broken: [Broken] = [
        Broken(label: "no token", field: "message.token") { var m = Messages.reminder(); m["token"] = nil; return m },
        Broken(label: "empty token", field: "message.token") { var m = Messages.reminder(); m["token"] = ""; return m },
        Broken(label: "neither notification nor activity", field: "message") { ["token": "t"] },
        Broken(label: "notification and activity", field: "message.notification") {
            var m = Messages.liveActivity(event: "start"); m["notification"] = ["title": "x"]; return m
        },
        Broken(label: "unknown event", field: "message.apns.payload.aps.event") { editAPS("update") { $0["event"] = "begin" } },
        Broken(label: "milliseconds", field: "message.apns.payload.aps.timestamp") { editAPS("update") { $0["timestamp"] = 1_776_384_000_000 } },
        Broken(label: "fractional stale-date", field: "message.apns.payload.aps.stale-date") { editAPS("start") { $0["stale-date"] = 1_776_711_600.5 } },
        Broken(label: "string dismissal-date", field: "message.apns.payload.aps.dismissal-date") { editAPS("end") { $0["dismissal-date"] = "1776385000" } },
        Broken(label: "no timestamp", field: "message.apns.payload.aps.timestamp") { editAPS("end") { $0["timestamp"] = nil } },
        Broken(label: "start without alert", field: "message.apns.payload.aps.alert") { editAPS("start") { $0["alert"] = nil } },
        Broken(label: "no content-state", field: "message.apns.payload.aps.content-state") { editAPS("update") { $0["content-state"] = nil } },
        Broken(label: "millisecond updatedAt", field: "message.apns.payload.aps.content-state.updatedAt") {
            editAPS("update") { aps in
                var state = aps["content-state"] as! [String: Any]
                state["updatedAt"] = 1_776_384_000_123
                aps["content-state"] = state
            }
        },
        Broken(label: "numeric data value", field: "message.data.streamId") {
            var m = Messages.reminder(); m["data"] = ["streamId": 7]; return m
        },
        Broken(label: "unknown field", field: "message.tokens") { var m = Messages.reminder(); m["tokens"] = ["a"]; return m },
        Broken(label: "ttl without unit", field: "message.android.ttl") { var m = Messages.reminder(); m["android"] = ["ttl": "412"]; return m },
        Broken(label: "numeric ttl", field: "message.android.ttl") { var m = Messages.reminder(); m["android"] = ["ttl": 412]; return m },
        Broken(label: "numeric collapse key", field: "message.android.collapse_key") {
            var m = Messages.reminder(); m["android"] = ["collapse_key": 1]; return m
        },
        Broken(label: "numeric channel id", field: "message.android.notification.channel_id") {
            var m = Messages.reminder(); m["android"] = ["notification": ["channel_id": 5]]; return m
        },
        Broken(label: "long collapse id", field: "message.apns.headers.apns-collapse-id") {
            var m = Messages.reminder(); m["apns"] = ["headers": ["apns-collapse-id": String(repeating: "r", count: 65)]]; return m
        },
        Broken(label: "reminder expiration not seconds", field: "message.apns.headers.apns-expiration") {
            var m = Messages.reminder(); m["apns"] = ["headers": ["apns-expiration": "soon"]]; return m
        },
    ]

    static func editAPS(_ event: String, _ edit: (inout [String: Any]) -> Void) -> [String: Any] {
        var message = Messages.liveActivity(event: event)
        var apns = message["apns"] as! [String: Any]
        var payload = apns["payload"] as! [String: Any]
        var aps = payload["aps"] as! [String: Any]
        edit(&aps)
        payload["aps"] = aps
        apns["payload"] = payload
        message["apns"] = apns
        return message
    }

    @Test(arguments: broken)
    func invalidMessagesGetFCMsInvalidArgument(_ broken: Broken) async throws {
        let fake = try FakeFCMProcess()
        let client = FakeFCMClient(fake)
        let token = try await client.accessToken(for: fake)
        let answer = try await client.send(broken.make(), bearer: token, project: fake.project)
        #expect(answer.status == 400)
        let error = try #require(answer.json["error"] as? [String: Any])
        #expect(error["code"] as? Int == 400)
        #expect(error["status"] as? String == "INVALID_ARGUMENT")
        let details = try #require(error["details"] as? [[String: Any]])
        #expect(details.first?["@type"] as? String == "type.googleapis.com/google.firebase.fcm.v1.FcmError")
        #expect(details.first?["errorCode"] as? String == "INVALID_ARGUMENT")
        let badRequest = try #require(details.first { $0["@type"] as? String == "type.googleapis.com/google.rpc.BadRequest" })
        let violations = try #require(badRequest["fieldViolations"] as? [[String: String]])
        #expect(violations.first?["field"] == broken.field)
        #expect(violations.first?["description"]?.isEmpty == false)
        #expect(try await client.call("GET", "/fake/messages").array.isEmpty)
        #expect(try await client.call("GET", "/fake/stats").json["byErrorCode"] as? [String: Int] == ["INVALID_ARGUMENT": 1])
    }

    /// A reminder body written by hand, with `title` spliced in as raw JSON text.
    static func rawReminder(title: String, tail: String = "") -> String {
        ##"{"message":{"token":"fcm-raw","notification":{"title":""## + title + ##"","body":"10 dakika kald\u0131"},"##
            + #""data":{"type":"stream_reminder","streamId":"s1","deepLink":"allmine://live-stream/s1"}}, "validate_only" : false }"# + tail
    }

    @Test func escapesAndUnicodeArriveDecoded() async throws {
        let fake = try FakeFCMProcess()
        let client = FakeFCMClient(fake)
        let token = try await client.accessToken(for: fake)
        let body = Self.rawReminder(title: #"Yay\u0131n \"canl\u0131\" \ud83c\udf89\n\/ \\ sekme\t"#)
        let answer = try await client.call(
            "POST", "/v1/projects/\(fake.project)/messages:send", body: Data(body.utf8), headers: ["Authorization": "Bearer \(token)"])
        #expect(answer.status == 200, "\(answer.text)")
        let recorded = try await client.call("GET", "/fake/messages").array
        let notification = (recorded.first?["message"] as? [String: Any])?["notification"] as? [String: String]
        #expect(notification?["title"] == "Yayın \"canlı\" 🎉\n/ \\ sekme\t")
        #expect(notification?["body"] == "10 dakika kaldı")
    }

    static let malformedBodies: [String] = [
        rawReminder(title: #"ok"#, tail: " x"),              // trailing garbage
        rawReminder(title: #"unterminated"#).replacingOccurrences(of: "}}, ", with: "}, "),
        rawReminder(title: "raw\u{01}control"),               // control character inside a string
        rawReminder(title: #"bad \x escape"#),
        rawReminder(title: #"lone \ud800 surrogate"#),
        #"{"message":{"token":"t","data":{"n":01}}}"#,       // leading zero
        #"{"message":{"token":"t",}}"#,                       // trailing comma
        #"{"message":{"token":"t","data":{"n":1e400}}}"#,     // a number no double holds
        #"{"message":{"token":"a","token":"b"}}"#,            // a repeated key
        String(repeating: "[", count: 300) + String(repeating: "]", count: 300),
    ]

    @Test(arguments: malformedBodies)
    func malformedJSONIsInvalidArgument(_ body: String) async throws {
        let fake = try FakeFCMProcess()
        let client = FakeFCMClient(fake)
        let token = try await client.accessToken(for: fake)
        let answer = try await client.call(
            "POST", "/v1/projects/\(fake.project)/messages:send", body: Data(body.utf8), headers: ["Authorization": "Bearer \(token)"])
        #expect(answer.status == 400, "\(body.prefix(80)): \(answer.text)")
        #expect((answer.json["error"] as? [String: Any])?["status"] as? String == "INVALID_ARGUMENT")
    }

    @Test func nonJSONBodyIsInvalidArgument() async throws {
        let fake = try FakeFCMProcess()
        let client = FakeFCMClient(fake)
        let token = try await client.accessToken(for: fake)
        let answer = try await client.call(
            "POST", "/v1/projects/\(fake.project)/messages:send", body: Data("{not json".utf8), headers: ["Authorization": "Bearer \(token)"])
        #expect(answer.status == 400)
        #expect((answer.json["error"] as? [String: Any])?["status"] as? String == "INVALID_ARGUMENT")
    }
}
