import JSON
import TestSupport
import Testing

/// The device model's broadcast channels (SPEC 12.5): an activity subscribed to a channel applies what a broadcast
/// on it carries, whether or not its token ever reached the backend; a phone away gets the channel's newest message
/// on its return unless it expired; an activity that subscribes later gets the stored one.
@Suite struct DeviceModelChannelTests {
    typealias R = DeviceModelRecords

    /// A fake APNs record line of a push-to-start with `input-push-channel` (`apns-expiration` = its planned start).
    static func apnsStart(_ stream: String, _ token: String, channel: String, planned: Int, at: Double) -> JSONValue {
        let aps: JSONValue = [
            "event": "start", "timestamp": .int(Int(at)), "input-push-channel": .string(channel), "attributes": ["streamId": .string(stream)],
            "stale-date": .int(planned + R.stale), "content-state": ["streamId": .string(stream), "scheduledStartAt": .int(planned)],
        ]
        return ["kind": "device", "token": .string(token), "receivedAt": .number(at), "payload": ["aps": aps],
                "headers": ["apns-priority": "10", "apns-push-type": "liveactivity", "apns-expiration": .string(String(planned))]]
    }

    /// A fake APNs record line of a broadcast: an update expires at its planned start, an end (with `reason`) at its
    /// dismissal date, `dismissal` seconds after `at` (SPEC 12.5).
    static func broadcast(_ event: String, _ stream: String, channel: String, planned: Int, at: Double, reason: String? = nil,
                          dismissal: Int = 900) -> JSONValue {
        var state: [String: JSONValue] = ["streamId": .string(stream), "scheduledStartAt": .int(planned)]
        var aps: [String: JSONValue] = ["event": .string(event), "timestamp": .int(Int(at))]
        var expiration = planned
        if event == "end" {
            if let reason { state["endedReason"] = .string(reason) }
            aps["dismissal-date"] = .int(Int(at) + dismissal)
            expiration = Int(at) + dismissal
        } else {
            aps["stale-date"] = .int(planned + R.stale)
        }
        aps["content-state"] = .object(state)
        return ["kind": "broadcast", "channelId": .string(channel), "receivedAt": .number(at), "payload": ["aps": .object(aps)],
                "headers": ["apns-channel-id": .string(channel), "apns-push-type": "liveactivity", "apns-expiration": .string(String(expiration))]]
    }

    static func model() -> DeviceModel {
        let model = DeviceModel(leadSeconds: 10)
        for device in ["d1", "d2"] {
            model.device(device, platform: "ios")
            model.pushToStartToken(device, "pts-" + device)
        }
        return model
    }

    static func clean(_ violations: [Int: [String]]) -> Bool { violations.values.allSatisfy { $0.isEmpty } }

    @Test func aBroadcastReachesEverySubscribedActivityWithoutTokens() throws {
        let model = Self.model()
        let first = try #require(model.applyAny(Self.apnsStart("s1", "pts-d1", channel: "ch1", planned: 100, at: 90)))
        let second = try #require(model.applyAny(Self.apnsStart("s1", "pts-d2", channel: "ch1", planned: 100, at: 90)))
        #expect(first.token == nil && second.token == nil && first.channel == "ch1", "no runtime token registered")
        model.applyAny(Self.broadcast("update", "s1", channel: "ch1", planned: 160, at: 91))
        #expect(first.shows == 160 && second.shows == 160 && first.staleAt == 166)
        model.applyAny(Self.broadcast("end", "s1", channel: "ch1", planned: 160, at: 92, reason: "cancelled"))
        #expect(first.ended && second.ended && first.endedReason == "cancelled" && first.endSentAt == 92)
        let cancelled = ["s1": DeviceModel.FinalStream(status: "cancelled", planned: 160, endedAt: 91.5)]
        #expect(Self.clean(model.check(cancelled, eligibleSince: DeviceModelTests.always, now: 95)))
        // Judged like a token end: an end broadcast 45 s after the cancel violates 2.
        let slow = Self.model()
        let activity = try #require(slow.applyAny(Self.apnsStart("s1", "pts-d1", channel: "ch1", planned: 100, at: 90)))
        slow.applyAny(Self.broadcast("end", "s1", channel: "ch1", planned: 100, at: 145, reason: "cancelled"))
        #expect(activity.ended)
        let late = slow.check(["s1": .init(status: "cancelled", planned: 100, endedAt: 100)], eligibleSince: DeviceModelTests.always, now: 150)
        #expect(late[2]?.count == 1 && late[4]?.isEmpty == true, "\(late)")
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

    @Test func anUpdateBroadcastAfterTheEndViolatesFiveButNotAfterTheAppsEnd() throws {
        let model = Self.model()
        let activity = try #require(model.applyAny(Self.apnsStart("s1", "pts-d1", channel: "ch1", planned: 100, at: 90)))
        model.applyAny(Self.broadcast("end", "s1", channel: "ch1", planned: 100, at: 91, reason: "cancelled"))
        model.applyAny(Self.broadcast("update", "s1", channel: "ch1", planned: 130, at: 92))
        #expect(activity.ended && activity.shows == 100)
        let violations = model.check(DeviceModelTests.ended("cancelled", 130), eligibleSince: DeviceModelTests.always, now: 95)
        #expect(violations[5]?.count == 1, "\(violations)")
        // The app ended the older of two channel activities: the channel still carries the stream's updates to it.
        let app = Self.model()
        let older = try #require(app.applyAny(Self.apnsStart("s1", "pts-d1", channel: "ch1", planned: 100, at: 90)))
        let newer = try #require(app.applyAny(Self.apnsStart("s1", "pts-d1", channel: "ch1", planned: 100, at: 90.5)))
        app.endedByApp(older, at: 91)
        app.applyAny(Self.broadcast("update", "s1", channel: "ch1", planned: 130, at: 100))
        #expect(newer.shows == 130 && app.counts["channel_update_after_app_end"] == 1)
        let judged = app.check(DeviceModelTests.scheduled(130), eligibleSince: DeviceModelTests.always, now: 101)
        #expect(judged[5]?.isEmpty == true && judged[1]?.isEmpty == true && judged[3]?.count == 1, "\(judged)")
    }

    @Test func aLateSubscriberGetsTheStoredMessageUnlessOlderOrExpired() throws {
        let model = Self.model()
        model.applyAny(Self.broadcast("update", "s1", channel: "ch1", planned: 160, at: 91))
        let late = try #require(model.applyAny(Self.apnsStart("s1", "pts-d1", channel: "ch1", planned: 100, at: 90)))
        #expect(late.shows == 160, "the stored update is newer than the start it opened with")
        let fresh = try #require(model.applyAny(Self.apnsStart("s1", "pts-d2", channel: "ch1", planned: 170, at: 95)))
        #expect(fresh.shows == 170, "an older stored message is not applied")
        // A stored end whose dismissal date passed before the activity showed: noted as an end that expired.
        let ended = Self.model()
        ended.applyAny(Self.broadcast("end", "s1", channel: "ch1", planned: 100, at: 91, reason: "cancelled", dismissal: 3))
        ended.phones.away("d1", from: 89, until: 99)
        #expect(ended.receiveAny(Self.apnsStart("s1", "pts-d1", channel: "ch1", planned: 120, at: 90)).isEmpty, "held while away")
        let opened = try #require(ended.returns(by: 100).first)
        #expect(!opened.ended && opened.endExpiredAt == 99 && ended.counts["channel_stored_expired_end"] == 1)
    }

    @Test func aPhoneAwayGetsTheChannelsNewestUnexpiredMessageOnItsReturn() throws {
        let model = Self.model()
        let away = try #require(model.applyAny(Self.apnsStart("s1", "pts-d1", channel: "ch1", planned: 100, at: 90)))
        let online = try #require(model.applyAny(Self.apnsStart("s1", "pts-d2", channel: "ch1", planned: 100, at: 90)))
        model.phones.away("d1", from: 95, until: 150)
        _ = model.receiveAny(Self.broadcast("update", "s1", channel: "ch1", planned: 210, at: 96))
        _ = model.receiveAny(Self.broadcast("update", "s1", channel: "ch1", planned: 220, at: 97))
        #expect(online.shows == 220 && away.shows == 100, "the phone online applied both, the one away neither yet")
        #expect(model.counts["held"] == 2)
        _ = model.returns(by: 151)
        #expect(away.shows == 220 && model.counts["replaced_away"] == 1, "the channel's newest message replaced the held one")
        #expect(Self.clean(model.check(DeviceModelTests.scheduled(220), eligibleSince: DeviceModelTests.always, now: 152)))

        // An update that expired (its planned start passed) while away: the start it leaves is no violation 1.
        let expired = Self.model()
        let activity = try #require(expired.applyAny(Self.apnsStart("s1", "pts-d1", channel: "ch1", planned: 100, at: 90)))
        expired.phones.away("d1", from: 95, until: 150)
        _ = expired.receiveAny(Self.broadcast("update", "s1", channel: "ch1", planned: 120, at: 96))
        _ = expired.returns(by: 151)
        #expect(activity.shows == 100 && activity.expiredAway == [120])
        #expect(Self.clean(expired.check(DeviceModelTests.scheduled(120), eligibleSince: DeviceModelTests.always, now: 152)))
    }

    @Test func anEndThatExpiredWhileAwayIsJudgedByTheActivitysStaleness() throws {
        // The end expires at its dismissal date (3 s): a phone back before the countdown went stale (106) still shows
        // a cancelled stream's countdown (2); back after it, the stale countdown is no violation.
        for (back, violated) in [(104.0, true), (110.0, false)] {
            let model = Self.model()
            let activity = try #require(model.applyAny(Self.apnsStart("s1", "pts-d1", channel: "ch1", planned: 100, at: 90)))
            model.phones.away("d1", from: 95, until: back)
            _ = model.receiveAny(Self.broadcast("end", "s1", channel: "ch1", planned: 100, at: 96, reason: "cancelled", dismissal: 3))
            _ = model.returns(by: back + 1)
            #expect(!activity.ended && activity.endExpiredAt == back)
            let found = model.check(["s1": .init(status: "cancelled", planned: 100, endedAt: 95)], eligibleSince: DeviceModelTests.always, now: back + 2)
            #expect((found[2]?.count == 1) == violated, "back at \(back): \(found)")
        }
        // A held end not yet expired on the return ends the activity then.
        let kept = Self.model()
        let activity = try #require(kept.applyAny(Self.apnsStart("s1", "pts-d1", channel: "ch1", planned: 100, at: 90)))
        kept.phones.away("d1", from: 95, until: 98)
        _ = kept.receiveAny(Self.broadcast("end", "s1", channel: "ch1", planned: 100, at: 96, reason: "cancelled", dismissal: 3))
        #expect(!activity.ended)
        _ = kept.returns(by: 99)
        #expect(activity.ended && activity.endSentAt == 96)
    }

    @Test func aStartHeldWhileAwaySubscribesOnTheReturnAndGetsTheStoredEnd() throws {
        let model = Self.model()
        model.phones.away("d1", from: 89, until: 97)
        #expect(model.receiveAny(Self.apnsStart("s1", "pts-d1", channel: "ch1", planned: 100, at: 90)).isEmpty)
        _ = model.receiveAny(Self.broadcast("end", "s1", channel: "ch1", planned: 100, at: 93, reason: "cancelled"))
        #expect(model.counts["broadcast_no_subscriber"] == 1, "nothing subscribed yet: the start is held")
        let opened = try #require(model.returns(by: 98).first)
        #expect(opened.ended && opened.endedReason == "cancelled" && model.counts["channel_stored_applied"] == 1)
        #expect(Self.clean(model.check(DeviceModelTests.ended("cancelled", 100), eligibleSince: DeviceModelTests.always, now: 99)))
    }

    @Test func tokenPushesStillApplyByTokenBesideTheChannel() throws {
        let model = Self.model()
        let onChannel = try #require(model.applyAny(Self.apnsStart("s1", "pts-d1", channel: "ch1", planned: 100, at: 90)))
        var tokenStart = Self.apnsStart("s1", "pts-d2", channel: "", planned: 100, at: 90)
        tokenStart = ["kind": "device", "token": "pts-d2", "receivedAt": 90, "headers": tokenStart["headers"] ?? .null,
                      "payload": ["aps": ["event": "start", "timestamp": 90, "attributes": ["streamId": "s1"],
                                          "content-state": ["streamId": "s1", "scheduledStartAt": 100]]]]
        let byToken = try #require(model.applyAny(tokenStart))
        #expect(byToken.channel == nil && model.channels.subscribers["ch1"]?.count == 1)
        model.attach(byToken, "rt2")
        let update: JSONValue = [
            "kind": "device", "token": "rt2", "receivedAt": .number(91),
            "payload": ["aps": ["event": "update", "timestamp": 91, "content-state": ["streamId": "s1", "scheduledStartAt": 120]]],
        ]
        model.applyAny(update)
        model.applyAny(Self.broadcast("update", "s1", channel: "ch1", planned: 120, at: 91))
        #expect(byToken.shows == 120 && onChannel.shows == 120)
        #expect(Self.clean(model.check(DeviceModelTests.scheduled(120), eligibleSince: DeviceModelTests.always, now: 95)))
        // A token push keeps its apns-expiration: a start held past its planned start is dropped.
        let held = Self.model()
        held.phones.away("d1", from: 89, until: 101)
        #expect(held.receiveAny(Self.apnsStart("s1", "pts-d1", channel: "ch1", planned: 100, at: 90)).isEmpty)
        #expect(held.returns(by: 102).isEmpty && held.counts["expired_away_start"] == 1 && held.liveCount == 0)
        // Fake FCM lines replay as before.
        let fcm = Self.model()
        let opened = try #require(fcm.applyAny(R.ios("start", "s1", "pts-d1", planned: 100, at: 90)))
        #expect(opened.channel == nil && fcm.channels.subscribers.isEmpty)
    }
}
