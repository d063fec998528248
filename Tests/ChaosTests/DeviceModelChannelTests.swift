import JSON
import TestSupport
import Testing

/// The device model's broadcast channels (SPEC 12.5): an activity subscribed to a channel applies what a broadcast
/// on it carries, whether or not its token ever reached the backend.
@Suite struct DeviceModelChannelTests {
    typealias R = DeviceModelRecords

    /// A fake APNs record line of a push-to-start with `input-push-channel`.
    static func apnsStart(_ stream: String, _ token: String, channel: String, planned: Int, at: Double) -> JSONValue {
        let aps: JSONValue = [
            "event": "start", "timestamp": .int(Int(at)), "input-push-channel": .string(channel), "attributes": ["streamId": .string(stream)],
            "content-state": ["streamId": .string(stream), "scheduledStartAt": .int(planned)],
        ]
        return ["kind": "device", "token": .string(token), "receivedAt": .number(at), "payload": ["aps": aps]]
    }

    /// A fake APNs record line of a broadcast.
    static func broadcast(_ event: String, _ stream: String, channel: String, planned: Int, at: Double, reason: String? = nil) -> JSONValue {
        var state: [String: JSONValue] = ["streamId": .string(stream), "scheduledStartAt": .int(planned)]
        var aps: [String: JSONValue] = ["event": .string(event), "timestamp": .int(Int(at))]
        if let reason {
            state["endedReason"] = .string(reason)
            aps["dismissal-date"] = .int(Int(at) + 900)
        }
        aps["content-state"] = .object(state)
        return ["kind": "broadcast", "channelId": .string(channel), "receivedAt": .number(at), "payload": ["aps": .object(aps)]]
    }

    static func model() -> DeviceModel {
        let model = DeviceModel(leadSeconds: 10)
        for device in ["d1", "d2"] {
            model.device(device, platform: "ios")
            model.pushToStartToken(device, "pts-" + device)
        }
        return model
    }

    @Test func aBroadcastReachesEverySubscribedActivityWithoutTokens() throws {
        let model = Self.model()
        let first = try #require(model.applyAny(Self.apnsStart("s1", "pts-d1", channel: "ch1", planned: 100, at: 90)))
        let second = try #require(model.applyAny(Self.apnsStart("s1", "pts-d2", channel: "ch1", planned: 100, at: 90)))
        #expect(first.token == nil && second.token == nil, "no runtime token registered")
        model.applyAny(Self.broadcast("update", "s1", channel: "ch1", planned: 160, at: 91))
        #expect(first.shows == 160 && second.shows == 160)
        model.applyAny(Self.broadcast("end", "s1", channel: "ch1", planned: 160, at: 92, reason: "cancelled"))
        #expect(first.ended && second.ended && first.endedReason == "cancelled")
        let violations = model.check(DeviceModelTests.ended("cancelled", 160), eligibleSince: DeviceModelTests.always, now: 95)
        #expect(violations.values.allSatisfy { $0.isEmpty }, "\(violations)")
    }

    @Test func anotherChannelsBroadcastChangesNothing() throws {
        let model = Self.model()
        let activity = try #require(model.applyAny(Self.apnsStart("s1", "pts-d1", channel: "ch1", planned: 100, at: 90)))
        model.applyAny(Self.broadcast("end", "s2", channel: "ch2", planned: 100, at: 91, reason: "cancelled"))
        #expect(!activity.ended)
        #expect(model.counts["broadcast_no_subscriber"] == 1)
        let violations = model.check(DeviceModelTests.ended("cancelled", 100), eligibleSince: DeviceModelTests.always, now: 95)
        #expect(violations[2]?.count == 1, "the channel's activity was never ended: \(violations)")
    }

    @Test func anUpdateBroadcastAfterTheEndViolatesFive() throws {
        let model = Self.model()
        let activity = try #require(model.applyAny(Self.apnsStart("s1", "pts-d1", channel: "ch1", planned: 100, at: 90)))
        model.applyAny(Self.broadcast("end", "s1", channel: "ch1", planned: 100, at: 91, reason: "cancelled"))
        model.applyAny(Self.broadcast("update", "s1", channel: "ch1", planned: 130, at: 92))
        #expect(activity.ended && activity.shows == 100)
        let violations = model.check(DeviceModelTests.ended("cancelled", 130), eligibleSince: DeviceModelTests.always, now: 95)
        #expect(violations[5]?.count == 1, "\(violations)")
    }

    @Test func aLateSubscriberGetsTheStoredMessageOnlyWhenItIsNewer() throws {
        let model = Self.model()
        model.applyAny(Self.broadcast("update", "s1", channel: "ch1", planned: 160, at: 91))
        let late = try #require(model.applyAny(Self.apnsStart("s1", "pts-d1", channel: "ch1", planned: 100, at: 90)))
        #expect(late.shows == 160, "the stored update is newer than the start it opened with")
        let fresh = try #require(model.applyAny(Self.apnsStart("s1", "pts-d2", channel: "ch1", planned: 170, at: 95)))
        #expect(fresh.shows == 170, "an older stored message is not applied")
    }

    @Test func tokenPushesAndFCMRecordsStillReplay() throws {
        let model = Self.model()
        let opened = try #require(model.applyAny(R.ios("start", "s1", "pts-d1", planned: 100, at: 90)))
        model.attach(opened, "rt1")
        let update: JSONValue = [
            "kind": "device", "token": "rt1", "receivedAt": .number(91),
            "payload": ["aps": ["event": "update", "timestamp": 91, "content-state": ["streamId": "s1", "scheduledStartAt": 120]]],
        ]
        model.applyAny(update)
        #expect(opened.shows == 120)
        #expect(model.channels.subscribers.isEmpty)
    }
}
