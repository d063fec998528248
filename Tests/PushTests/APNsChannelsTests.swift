import Foundation
import HTTPClient
import HTTPTypes
import Push
import Testing

/// Apple's broadcast channel API as `APNsChannels` speaks it (SPEC 12.5).
@Suite struct APNsChannelsTests {
    static func channels(_ http: ScriptedHTTP) -> APNsChannels {
        APNsChannels(configuration: APNsTransportTests.configuration(override: "https://push.test/"), channelURL: "https://manage.test:2196/",
                     tokens: FixedToken(), http: http)
    }

    @Test func createPostsThePolicyAndReadsTheIDHeader() async throws {
        let http = ScriptedHTTP { _, _ in ScriptedHTTP.response(201, headers: ["apns-channel-id": "dHN0LWNoYW5uZWw="]) }
        let result = await Self.channels(http).create()
        #expect(result == .accepted(messageName: "dHN0LWNoYW5uZWw="))
        let request = try #require(http.requests.value.first)
        #expect(request.method == .post && request.url == "https://manage.test:2196/1/apps/com.allmine.app/channels")
        #expect(String(decoding: request.body, as: UTF8.self) == #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#)
        #expect(request.headers["authorization"] == "bearer fixed")
    }

    @Test func broadcastCarriesTheChannelAndNoTopic() async throws {
        let http = ScriptedHTTP { _, _ in ScriptedHTTP.response(200, headers: ["apns-id": "abc"]) }
        let result = await Self.channels(http).broadcast(channelID: "ch1", apnsHeaders: ["apns-priority": "5", "apns-expiration": "1776708000",
                                                                                         "apns-topic": "com.allmine.app.push-type.liveactivity"],
                                                         apsJSON: APNsTransportTests.aps)
        #expect(result == .accepted(messageName: "abc"))
        let request = try #require(http.requests.value.first)
        #expect(request.url == "https://push.test/4/broadcasts/apps/com.allmine.app")
        #expect(request.headers["apns-channel-id"] == "ch1" && request.headers["apns-push-type"] == "liveactivity")
        #expect(request.headers["apns-priority"] == "5" && request.headers["apns-expiration"] == "1776708000")
        #expect(request.headers["apns-topic"] == nil)
    }

    @Test func applesAnswersAreClassified() async {
        let answers: [(Int, String, [String: String], PushResult)] = [
            (400, #"{"reason":"BadChannelId"}"#, [:], .rejected(reason: "BadChannelId")),
            (410, #"{"reason":"ChannelNotRegistered"}"#, [:], .rejected(reason: "ChannelNotRegistered")),
            (429, #"{"reason":"TooManyRequests"}"#, ["Retry-After": "7"], .retryable(after: .seconds(7), reason: "TooManyRequests")),
            (403, #"{"reason":"InvalidProviderToken"}"#, [:], .configurationError(reason: "APNs 403 InvalidProviderToken")),
        ]
        for (status, body, headers, expected) in answers {
            let http = ScriptedHTTP { _, _ in ScriptedHTTP.response(status, body, headers: HTTPHeaders(headers)) }
            #expect(await Self.channels(http).broadcast(channelID: "ch1", apnsHeaders: [:], apsJSON: APNsTransportTests.aps) == expected, "\(status) \(body)")
        }
    }

    @Test func listAndDelete() async throws {
        let http = ScriptedHTTP { request, _ in
            request.method == .get ? ScriptedHTTP.response(200, #"{"channels":["a","b"]}"#) : ScriptedHTTP.response(404, #"{"reason":"BadChannelId"}"#)
        }
        let channels = Self.channels(http)
        let (listed, ids) = await channels.list()
        #expect(listed == .accepted(messageName: nil) && ids == ["a", "b"])
        #expect(await channels.delete("a") == .accepted(messageName: "a"), "a channel Apple no longer knows counts as deleted")
        let delete = try #require(http.requests.value.last)
        #expect(delete.method == .delete && delete.headers["apns-channel-id"] == "a")
        #expect(http.requests.value.first?.url == "https://manage.test:2196/1/apps/com.allmine.app/all-channels")
    }
}
