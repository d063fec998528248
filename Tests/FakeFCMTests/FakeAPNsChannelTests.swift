import Foundation
import HTTPClient
import Testing
import TestSupport

/// The fake APNs' channel management and broadcasts.
@Suite struct FakeAPNsChannelTests {
    @Test func channelsAreCreatedReadListedAndDeleted() async throws {
        let apns = try await FakeAPNsProcess()
        let client = try FakeAPNsClient(apns)
        let bearer = ["authorization": "bearer \(try client.providerToken())"]
        let path = "/1/apps/\(apns.bundleID)/channels"
        let id = try await client.createChannel()
        #expect(Data(base64Encoded: id) != nil)

        let read = try await client.send(.get, path, headers: bearer.merging(["apns-channel-id": id]) { $1 }, channelHost: true)
        #expect(read.status == 200)
        #expect(read.json["message-storage-policy"] as? Int == 1)
        #expect(read.json["push-type"] as? String == "LiveActivity")
        #expect(read.headers["apns-request-id"] != nil)

        let list = try await client.send(.get, "/1/apps/\(apns.bundleID)/all-channels", headers: bearer, channelHost: true)
        #expect(list.status == 200 && list.json["channels"] as? [String] == [id])
        #expect(list.headers["apns-request-id"] != nil)

        let badBodies = [
            (#"{"message-storage-policy":2,"push-type":"LiveActivity"}"#, "BadMessageStoragePolicy"),
            (#"{"push-type":"LiveActivity"}"#, "BadMessageStoragePolicy"),
            (#"{"message-storage-policy":1,"push-type":"Alert"}"#, "InvalidPushType"),
        ]
        for (body, reason) in badBodies {
            let answer = try await client.send(.post, path, headers: bearer, body: body, channelHost: true)
            #expect(answer.status == 400 && answer.reason == reason, "\(body)")
        }
        let missing = try await client.send(.get, path, headers: bearer, channelHost: true)
        #expect(missing.status == 400 && missing.reason == "MissingChannelId")
        let malformed = try await client.send(.get, path, headers: bearer.merging(["apns-channel-id": "not base64!"]) { $1 }, channelHost: true)
        #expect(malformed.status == 400 && malformed.reason == "BadChannelId")
        let otherApp = try await client.send(.get, "/1/apps/com.other.app/all-channels", headers: bearer, channelHost: true)
        #expect(otherApp.status == 400 && otherApp.reason == "TopicDisallowed")
        let unauthenticated = try await client.send(.get, "/1/apps/\(apns.bundleID)/all-channels", headers: [:], channelHost: true)
        #expect(unauthenticated.status == 403 && unauthenticated.reason == "MissingProviderToken")

        let deleted = try await client.send(.delete, path, headers: bearer.merging(["apns-channel-id": id]) { $1 }, channelHost: true)
        #expect(deleted.status == 204)
        let again = try await client.send(.delete, path, headers: bearer.merging(["apns-channel-id": id]) { $1 }, channelHost: true)
        #expect(again.status == 404 && again.reason == "ChannelNotRegistered")
        let stats = try await apns.control.call("GET", "/fake/stats").json
        #expect(stats["channelsCreated"] as? Int == 1 && stats["channelsDeleted"] as? Int == 1)
    }

    @Test func channelManagementAndPushesAnswerOnTheirOwnHosts() async throws {
        let apns = try await FakeAPNsProcess()
        let client = try FakeAPNsClient(apns)
        let create = try await client.send(.post, "/1/apps/\(apns.bundleID)/channels", headers: ["authorization": "bearer \(try client.providerToken())"],
                                           body: #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#, channelHost: false)
        #expect(create.status == 404 && create.reason == "BadPath", "channel management on the push host")
        let push = try await client.send(.post, "/3/device/abcd", headers: try client.liveActivityHeaders(), body: FakeAPNsClient.aps(), channelHost: true)
        #expect(push.status == 404 && push.reason == "BadPath", "a token push on the channel host")
        #expect(try await apns.control.call("GET", "/fake/channels").text == "[]")
    }

    @Test func aChannelLimitAnswersCannotCreateChannelConfig() async throws {
        let apns = try await FakeAPNsProcess(arguments: ["--max-channels", "2"])
        let client = try FakeAPNsClient(apns)
        let first = try await client.createChannel()
        _ = try await client.createChannel()
        let answer = try await client.send(.post, "/1/apps/\(apns.bundleID)/channels", headers: ["authorization": "bearer \(try client.providerToken())"],
                                           body: #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#, channelHost: true)
        #expect(answer.status == 400 && answer.reason == "CannotCreateChannelConfig")
        _ = try await client.send(.delete, "/1/apps/\(apns.bundleID)/channels",
                                  headers: ["authorization": "bearer \(try client.providerToken())", "apns-channel-id": first], channelHost: true)
        _ = try await client.createChannel()
        let channels = try await apns.channelIDs()
        #expect(channels.count == 2 && !channels.contains(first))
    }

    @Test func broadcastsGoToChannelsThatExist() async throws {
        let apns = try await FakeAPNsProcess()
        let client = try FakeAPNsClient(apns)
        let channel = try await client.createChannel()
        let requestID = UUID().uuidString.lowercased()
        let accepted = try await client.broadcast(channel: channel, body: FakeAPNsClient.aps("end"),
                                                  headers: ["apns-request-id": requestID, "apns-expiration": "1760000900"])
        #expect(accepted.status == 200 && accepted.httpVersion == "2")
        #expect(accepted.headers["apns-request-id"] == requestID)
        let messages = try await apns.control.call("GET", "/fake/messages?kind=broadcast&token=\(channel.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)")
        let entries = try #require((try JSONSerialization.jsonObject(with: messages.body)) as? [[String: Any]])
        #expect(entries.count == 1)
        #expect(entries.first?["channelId"] as? String == channel)
        #expect(entries.first?["event"] as? String == "end")
        #expect((entries.first?["headers"] as? [String: String])?["apns-expiration"] == "1760000900")

        let unknown = try await client.broadcast(channel: Data(repeating: 7, count: 16).base64EncodedString())
        #expect(unknown.status == 404 && unknown.reason == "ChannelNotRegistered")
        let malformed = try await client.broadcast(channel: "%%")
        #expect(malformed.status == 400 && malformed.reason == "BadChannelId")
        let alert = try await client.broadcast(channel: channel, headers: ["apns-push-type": "alert"])
        #expect(alert.status == 400 && alert.reason == "InvalidPushType")

        try await apns.fault(["endpoint": "broadcast", "token": channel, "status": 400, "reason": "BadChannelId", "nextRequests": 1] as [String: Any])
        let injected = try await client.broadcast(channel: channel)
        #expect(injected.status == 400 && injected.reason == "BadChannelId")
        #expect(try await client.broadcast(channel: channel).status == 200)
        let requests = try await apns.requests(kind: "broadcast")
        #expect(requests.map(\.status) == [200, 404, 400, 400, 400, 200])
    }
}
