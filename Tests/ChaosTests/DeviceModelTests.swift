import TestSupport
import Testing

/// The device model of chaos scenario 20 on hand-made record lines: what each phone shows, and which invariant each
/// kind of mistake violates. Pure: milliseconds, no servers.
@Suite struct DeviceModelTests {
    typealias R = DeviceModelRecords
    /// Every device eligible from the start of time, or never.
    static func always(_ device: String, _ stream: String) -> Double? { 0 }
    static func never(_ device: String, _ stream: String) -> Double? { nil }

    static func scheduled(_ planned: Int) -> [String: DeviceModel.FinalStream] { ["s1": .init(status: "scheduled", planned: planned)] }
    static func ended(_ status: String, _ planned: Int) -> [String: DeviceModel.FinalStream] { ["s1": .init(status: status, planned: planned)] }

    /// A model with one iOS device "d1" whose push-to-start token is "pts1".
    static func iosModel() -> DeviceModel {
        let model = DeviceModel(leadSeconds: 10)
        model.device("d1", platform: "ios")
        model.pushToStartToken("d1", "pts1")
        return model
    }

    @Test func startSessionUpdateAndADuplicateStart() throws {
        let model = Self.iosModel()
        let opened = try #require(model.apply(R.ios("start", "s1", "pts1", planned: 100, at: 90)), "a start opens an activity")
        #expect(opened.shows == 100, "the activity shows its planned start")
        model.attach(opened, "rt1")
        model.apply(R.ios("update", "s1", "rt1", planned: 130, at: 91))
        #expect(opened.shows == 130, "an update changes what the activity shows")
        let clean = model.check(Self.scheduled(130), eligibleSince: Self.always, now: 95)
        #expect(clean.values.allSatisfy { $0.isEmpty }, "nothing violated: \(clean)")
        #expect(model.check(Self.scheduled(140), eligibleSince: Self.always, now: 95)[1]?.count == 1, "an activity showing an old start violates 1")
        #expect(model.check(Self.ended("cancelled", 130), eligibleSince: Self.always, now: 95)[2]?.count == 1,
                "a live activity of a cancelled stream violates 2")
        model.apply(R.ios("start", "s1", "pts1", planned: 130, at: 92))
        #expect(model.duplicates == [StartKey(stream: "s1", token: "pts1")], "a second start of one generation is a duplicate")
    }

    @Test func bothActivitiesOfADuplicateMustEndUnlessTheAppEndedTheOlder() throws {
        // SPEC 12.1: a repeated push-to-start is a second activity; the backend keeps a session for each and ends both.
        let model = Self.iosModel()
        let first = try #require(model.apply(R.ios("start", "s1", "pts1", planned: 100, at: 90)))
        let second = try #require(model.apply(R.ios("start", "s1", "pts1", planned: 100, at: 90.1)))
        #expect(second.generation == first.generation && model.duplicates.count == 1)
        model.attach(first, "rtA")
        model.attach(second, "rtB")
        model.apply(R.ios("end", "s1", "rtB", at: 95, reason: "cancelled"))
        let cancelled = ["s1": DeviceModel.FinalStream(status: "cancelled", planned: 100, endedAt: 94)]
        let oneEnded = model.check(cancelled, eligibleSince: Self.always, now: 96)
        #expect(oneEnded[2]?.count == 1 && oneEnded[3]?.count == 1, "the duplicate left counting down violates 2: \(oneEnded)")
        model.apply(R.ios("end", "s1", "rtA", at: 95.2, reason: "cancelled"))
        let bothEnded = model.check(cancelled, eligibleSince: Self.always, now: 96)
        #expect(bothEnded[2]?.isEmpty == true && bothEnded[3]?.count == 1, "\(bothEnded)")
        // The app's duplicate ending: the older one ended on the phone needs no end from the backend.
        let app = Self.iosModel()
        let older = try #require(app.apply(R.ios("start", "s1", "pts1", planned: 100, at: 90)))
        let newer = try #require(app.apply(R.ios("start", "s1", "pts1", planned: 100, at: 90.1)))
        app.attach(newer, "rtB")
        app.endedByApp(older, at: 91)
        app.apply(R.ios("update", "s1", "rtB", planned: 120, at: 92))
        #expect(app.check(Self.scheduled(120), eligibleSince: Self.always, now: 96).values.allSatisfy { $0.isEmpty || $0.first?.hasPrefix("duplicate") == true })
        // A third start while the app-ended older one is gone and the newer lives is still a duplicate, not a new generation.
        let third = try #require(app.apply(R.ios("start", "s1", "pts1", planned: 120, at: 93)))
        #expect(third.generation == 1 && app.duplicates.count == 2)
    }

    @Test func nothingIsAppliedAfterAnEnd() throws {
        let model = Self.iosModel()
        let activity = try #require(model.apply(R.ios("start", "s1", "pts1", planned: 100, at: 90)))
        model.attach(activity, "rt1")
        model.apply(R.ios("end", "s1", "rt1", at: 91, reason: "cancelled"))
        model.apply(R.ios("update", "s1", "rt1", planned: 120, at: 92))
        #expect(activity.ended && activity.shows == 100, "nothing is applied after an end")
        let violations = model.check(Self.ended("cancelled", 120), eligibleSince: Self.always, now: 95)
        #expect(violations[5]?.count == 1 && violations[2]?.isEmpty == true, "an update after an end violates 5 only: \(violations)")
    }

    @Test func aStartAfterAnImmediateDismissalOpensGenerationTwo() throws {
        // A long reschedule: immediate dismissal, then the next push-to-start is generation 2, not a duplicate.
        let model = Self.iosModel()
        let activity = try #require(model.apply(R.ios("start", "s1", "pts1", planned: 100, at: 90)))
        model.attach(activity, "rt1")
        model.apply(R.ios("end", "s1", "rt1", at: 91, dismissal: 91))
        let next = try #require(model.apply(R.ios("start", "s1", "pts1", planned: 40000, at: 39990)))
        #expect(next.generation == 2 && model.duplicates.isEmpty, "a start after an immediate dismissal opens generation 2")
        let violations = model.check(Self.scheduled(40000), eligibleSince: Self.always, now: 39995)
        #expect(violations.values.allSatisfy { $0.isEmpty }, "generation 2 is fine: \(violations)")
        // Eligibility: both starts went to a device that never was eligible.
        #expect(model.check(Self.scheduled(40000), eligibleSince: Self.never, now: 39995)[4]?.count == 2, "starts to an ineligible device violate 4")
    }

    @Test func aStartAfterALongMovesEndOpensGenerationTwo() throws {
        // SPEC 12.2: the long move's end has no reason and stays for the dismissal window; the new push-to-start is not
        // a duplicate of the ended activity.
        let model = Self.iosModel()
        let activity = try #require(model.apply(R.ios("start", "s1", "pts1", planned: 100, at: 90)))
        model.attach(activity, "rt1")
        model.apply(R.ios("end", "s1", "rt1", planned: 40000, at: 91, dismissal: 991))
        #expect(activity.ended && activity.endedReason == nil && !activity.removed)
        let next = try #require(model.apply(R.ios("start", "s1", "pts1", planned: 40000, at: 39990)))
        #expect(next.generation == 2 && model.duplicates.isEmpty)
        #expect(model.check(Self.scheduled(40000), eligibleSince: Self.always, now: 39995).values.allSatisfy { $0.isEmpty })
    }

    @Test func aStartBeforeTLeadViolatesFour() {
        let model = Self.iosModel()
        model.apply(R.ios("start", "s1", "pts1", planned: 100, at: 80))
        #expect(model.check(Self.scheduled(100), eligibleSince: Self.always, now: 95)[4]?.count == 1, "a start before T-lead violates 4")
        #expect(model.lost(Self.scheduled(100), eligibleSince: Self.always, now: 95).isEmpty, "a device showing its activity is not lost")
        #expect(DeviceModel(leadSeconds: 10).lost(Self.scheduled(100), eligibleSince: Self.always, now: 95).isEmpty, "no devices, nothing lost")
    }

    @Test func anEligibleDeviceShowingNothingIsLost() {
        let model = Self.iosModel()
        let lost = model.lost(Self.scheduled(100), eligibleSince: Self.always, now: 95)
        #expect(lost.map { "\($0.device) \($0.stream)" } == ["d1 s1"])
        #expect(model.lost(Self.scheduled(110), eligibleSince: Self.always, now: 95).isEmpty, "not lost before T-lead")
    }

    @Test func androidSeqOrderAndAFinalEnd() throws {
        let model = DeviceModel(leadSeconds: 10)
        model.device("a1", platform: "android")
        model.fcmToken("a1", "fcmA")
        model.apply(R.android("start", "s1", "fcmA", seq: 1, planned: 100, at: 90))
        model.apply(R.android("update", "s1", "fcmA", seq: 3, planned: 120, at: 91))
        model.apply(R.android("update", "s1", "fcmA", seq: 2, planned: 110, at: 92))
        let countdown = try #require(model.activities["a1"]?.first)
        #expect(countdown.shows == 120, "an older seq is ignored")
        model.apply(R.android("end", "s1", "fcmA", seq: 4, planned: 120, at: 93, reason: "ready"))
        model.apply(R.android("update", "s1", "fcmA", seq: 5, planned: 150, at: 94))
        #expect(countdown.ended && countdown.shows == 120, "end is final")
        let violations = model.check(Self.ended("ready", 120), eligibleSince: Self.always, now: 95)
        #expect(violations[5]?.count == 1 && violations[2]?.isEmpty == true, "an update numbered after the end violates 5: \(violations)")
        model.apply(R.android("start", "s1", "fcmA", seq: 1, planned: 100, at: 95))
        #expect(model.duplicates == [StartKey(stream: "s1", token: "fcmA")], "a second Android start to one token is a duplicate")
    }

    @Test func unknownTokensAndOtherEventsAreCountedNotApplied() {
        let model = Self.iosModel()
        #expect(model.apply(R.ios("start", "s1", "nobody", planned: 100, at: 90)) == nil)
        model.apply(R.ios("update", "s1", "rt-nobody", planned: 100, at: 91))
        model.apply(["event": "reminder", "receivedAt": 92])
        #expect(model.counts["start_unknown_token"] == 1 && model.counts["update_unknown_token"] == 1 && model.counts["other"] == 1)
        #expect(model.starts.isEmpty && model.liveCount == 0)
    }

    /// One hand-made history with every kind of violation, each on its own phone; the judge names each one.
    @Test func theJudgeFindsEveryKindOfViolation() throws {
        let model = DeviceModel(leadSeconds: 10)
        for device in ["d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8", "d9", "d10"] {
            model.device(device, platform: "ios")
            model.pushToStartToken(device, "pts-" + device)
        }
        model.device("a1", platform: "android")
        model.fcmToken("a1", "fcm-a1")
        // s1 still scheduled, planned for 130 (moved from 100 at 91); s2 cancelled at 100; s3 started at 100.
        let streams: [String: DeviceModel.FinalStream] = [
            "s1": .init(status: "scheduled", planned: 130), "s2": .init(status: "cancelled", planned: 130, endedAt: 100),
            "s3": .init(status: "started", planned: 120, endedAt: 100),
        ]
        func started(_ device: String, _ stream: String, planned: Int = 100, at: Double = 90) throws -> ModelActivity {
            let activity = try #require(model.apply(R.ios("start", stream, "pts-" + device, planned: planned, at: at)))
            model.attach(activity, "rt-" + device + "-" + String(activity.openedAt))
            return activity
        }
        // 1: a wrong start time (the update to 130 never came).
        _ = try started("d1", "s1")
        // 2: an activity never ended.
        _ = try started("d2", "s2")
        // 2 and 3: a duplicate start (not in flight at a kill: the run's check); only one of the two ended.
        let first = try started("d3", "s2")
        _ = try started("d3", "s2", at: 90.5)
        model.apply(R.ios("end", "s2", first.token!, at: 101, reason: "cancelled"))
        // 2: an end 45 s after it could have gone.
        let late = try started("d4", "s2")
        model.apply(R.ios("end", "s2", late.token!, at: 145, reason: "cancelled"))
        // 4: a start before the device was eligible.
        _ = try started("d5", "s1", planned: 130, at: 121)
        // 5: an update after the end.
        let afterEnd = try started("d6", "s2")
        model.apply(R.ios("end", "s2", afterEnd.token!, at: 101, reason: "cancelled"))
        model.apply(R.ios("update", "s2", afterEnd.token!, planned: 130, at: 102))
        // 5: an update 20 s after the app ended the activity and deleted its session.
        let appEnded = try started("d7", "s2")
        model.endedByApp(appEnded, at: 95)
        model.apply(R.ios("update", "s2", appEnded.token!, planned: 130, at: 115))
        // 6: a stale text: the end of a started stream says "cancelled".
        let wrongReason = try started("d8", "s3")
        model.apply(R.ios("end", "s3", wrongReason.token!, at: 101, reason: "cancelled"))
        // 6: the long move's end (no reason) sent after the stream was cancelled.
        let noReason = try started("d9", "s2")
        model.apply(R.ios("end", "s2", noReason.token!, at: 101))
        // 6: an end saying "cancelled" for a stream still scheduled (the long move told as a cancel).
        let movedAsCancel = try started("d10", "s1", planned: 130, at: 121)
        model.apply(R.ios("end", "s1", movedAsCancel.token!, at: 122, reason: "cancelled"))
        // 2: an Android phone away when s2 was cancelled, back at 104 before its countdown went stale (106): the end's ttl
        // (2 s, as a short END_DISMISS_AFTER_SECONDS alone would give) had run out.
        model.phones.away("a1", from: 99, until: 104)
        _ = model.receive(R.android("start", "s2", "fcm-a1", seq: 1, planned: 100, at: 90))
        _ = model.receive(R.android("end", "s2", "fcm-a1", seq: 2, planned: 100, at: 100, reason: "cancelled", ttl: 2))
        _ = model.returns(by: 125)
        let eligible: DeviceModel.EligibleSince = { device, _ in device == "d5" ? 125 : 0 }
        let violations = model.check(streams, eligibleSince: eligible, now: 150)
        let found = violations.mapValues { $0.map { $0.components(separatedBy: " ")[0].trimmingCharacters(in: ["<"]) } }
        #expect(found[1] == ["d1"], "\(violations[1] ?? [])")
        #expect(Set(found[2] ?? []) == ["d2", "d3", "d4", "a1"] && found[2]?.count == 4, "\(violations[2] ?? [])")
        #expect(violations[3]?.count == 1, "\(violations[3] ?? [])")
        #expect(violations[4]?.count == 1 && violations[4]?.first?.contains("d5") == true, "d5's start before it was eligible: \(violations[4] ?? [])")
        #expect(violations[5]?.count == 2, "\(violations[5] ?? [])")
        #expect(Set(found[6] ?? []) == ["d8", "d9", "d10"], "\(violations[6] ?? [])")
        #expect(violations.values.allSatisfy { !$0.isEmpty })
    }

    @Test func aPhoneAwayGetsWhatIsHeldOnItsReturnInOrderAndUnexpired() throws {
        let model = Self.iosModel()
        model.phones.away("d1", from: 89, until: 97)
        // The start is held and opens the activity on the phone's return (before the planned start: not expired).
        #expect(model.receive(R.ios("start", "s1", "pts1", planned: 100, at: 90)).isEmpty && model.liveCount == 0)
        let opened = model.returns(by: 97.5)
        let activity = try #require(opened.first)
        #expect(opened.count == 1 && activity.openedAt == 97 && activity.shows == 100 && activity.startSentAt == 90)
        model.attach(activity, "rt1")
        // Away again is one window only; a message to a phone online is applied at once.
        _ = model.receive(R.ios("update", "s1", "rt1", planned: 120, at: 98))
        #expect(activity.shows == 120)

        // A start whose apns-expiration (its planned start) passed while the phone was away is dropped: nothing shows.
        let expired = Self.iosModel()
        expired.phones.away("d1", from: 89, until: 101)
        _ = expired.receive(R.ios("start", "s1", "pts1", planned: 100, at: 90))
        #expect(expired.returns(by: 102).isEmpty && expired.liveCount == 0 && expired.counts["expired_away_start"] == 1)
    }

    @Test func iosKeepsTheNewestHeldMessagePerTokenAndDropsExpiredUpdates() throws {
        let model = Self.iosModel()
        let activity = try #require(model.apply(R.ios("start", "s1", "pts1", planned: 200, at: 90)))
        model.attach(activity, "rt1")
        model.phones.away("d1", from: 91, until: 150)
        _ = model.receive(R.ios("update", "s1", "rt1", planned: 210, at: 92))
        _ = model.receive(R.ios("update", "s1", "rt1", planned: 220, at: 93))
        _ = model.returns(by: 151)
        #expect(activity.shows == 220 && model.counts["replaced_away"] == 1, "the newer update replaced the held one")
        // An update that expired (its planned start passed) while away: the stale start it leaves is no violation.
        let moved = Self.iosModel()
        let shown = try #require(moved.apply(R.ios("start", "s1", "pts1", planned: 200, at: 190)))
        moved.attach(shown, "rt1")
        moved.phones.away("d1", from: 191, until: 199)
        _ = moved.receive(R.ios("update", "s1", "rt1", planned: 195, at: 192))
        _ = moved.returns(by: 200)
        #expect(shown.shows == 200 && shown.expiredAway == [195])
        #expect(moved.check(Self.scheduled(195), eligibleSince: Self.always, now: 200)[1]?.isEmpty == true)
        #expect(moved.check(Self.scheduled(196), eligibleSince: Self.always, now: 200)[1]?.count == 1, "another start still counts")
        // An end has no apns-expiration: it is kept and ends the activity on the return.
        let ended = Self.iosModel()
        let live = try #require(ended.apply(R.ios("start", "s1", "pts1", planned: 200, at: 190)))
        ended.attach(live, "rt1")
        ended.phones.away("d1", from: 191, until: 5000)
        _ = ended.receive(R.ios("end", "s1", "rt1", at: 192, reason: "cancelled"))
        #expect(!live.ended)
        _ = ended.returns(by: 5001)
        #expect(live.ended && live.endSentAt == 192)
        #expect(ended.check(Self.ended("cancelled", 200), eligibleSince: Self.always, now: 5001).values.allSatisfy { $0.isEmpty })
    }

    @Test func androidCollapseKeysReplaceHeldCountdownsAndEndsLiveUntilStale() throws {
        let model = DeviceModel(leadSeconds: 10)
        model.device("a1", platform: "android")
        model.fcmToken("a1", "fcmA")
        model.phones.away("a1", from: 89, until: 95)
        _ = model.receive(R.android("start", "s1", "fcmA", seq: 1, planned: 100, at: 90))
        _ = model.receive(R.android("update", "s1", "fcmA", seq: 2, planned: 120, at: 91))
        _ = model.receive(R.android("end", "s1", "fcmA", seq: 3, planned: 120, at: 92, reason: "cancelled"))
        _ = model.returns(by: 96)
        let countdown = try #require(model.activities["a1"]?.first)
        #expect(model.counts["replaced_away"] == 1 && model.counts["android_start"] == nil, "the update replaced the held start (one collapse key)")
        #expect(countdown.ended && countdown.endedReason == "cancelled", "the end (no collapse key) came after it, in order")
        // Back after the end's ttl ran out, once the countdown had gone stale (126): no violation.
        let stale = DeviceModel(leadSeconds: 10)
        stale.device("a1", platform: "android")
        stale.fcmToken("a1", "fcmA")
        _ = stale.receive(R.android("start", "s1", "fcmA", seq: 1, planned: 120, at: 110))
        stale.phones.away("a1", from: 111, until: 200)
        _ = stale.receive(R.android("end", "s1", "fcmA", seq: 2, planned: 120, at: 112, reason: "cancelled"))
        _ = stale.returns(by: 201)
        let shown = try #require(stale.activities["a1"]?.first)
        #expect(!shown.ended && shown.endExpiredAt == 200 && shown.staleAt == 126)
        let cancelled = ["s1": DeviceModel.FinalStream(status: "cancelled", planned: 120, endedAt: 111)]
        #expect(stale.check(cancelled, eligibleSince: Self.always, now: 201)[2]?.isEmpty == true)
    }

    /// A crash duplicate the app ended (the older of the pair, its session deleted), then the long move's end to the
    /// newer: the next start opens generation 2, and the crash is counted once (chaos seed 75409671 counted it twice).
    @Test func aStartAfterTheLongMoveEndedTheSurvivorOfAnAppEndedPairIsANewGeneration() throws {
        let model = Self.iosModel()
        let older = try #require(model.apply(R.ios("start", "s1", "pts1", planned: 100, at: 90)))
        model.attach(older, "rtA", at: 90.5)
        let newer = try #require(model.apply(R.ios("start", "s1", "pts1", planned: 100, at: 91)))
        model.attach(newer, "rtB", at: 92)
        model.endedByApp(older, at: 92)
        model.apply(R.ios("end", "s1", "rtB", planned: 40000, at: 95, dismissal: 995))
        let next = try #require(model.apply(R.ios("start", "s1", "pts1", planned: 120, at: 100)))
        #expect(next.generation == 2)
        #expect(model.duplicates == [StartKey(stream: "s1", token: "pts1")] && model.lateSessionDuplicates.isEmpty)
    }

    @Test func aNextGenerationStartToAPhoneWhoseSessionCameAfterTheLongMoveIsNoCrashDuplicate() throws {
        let model = Self.iosModel()
        model.device("d2", platform: "ios")
        model.pushToStartToken("d2", "pts2")
        let known = try #require(model.apply(R.ios("start", "s1", "pts2", planned: 100, at: 90)))
        model.attach(known, "rt2", at: 91)
        let unknown = try #require(model.apply(R.ios("start", "s1", "pts1", planned: 100, at: 90)))
        // The long move ends the activity whose session the backend had; d1's comes 3 s later.
        model.apply(R.ios("end", "s1", "rt2", planned: 40000, at: 92, dismissal: 992))
        model.attach(unknown, "rt1", at: 95)
        // Moved back: the next generation's starts.
        model.apply(R.ios("start", "s1", "pts2", planned: 120, at: 100))
        model.apply(R.ios("start", "s1", "pts1", planned: 120, at: 100))
        #expect(model.duplicates.isEmpty && model.lateSessionDuplicates == [StartKey(stream: "s1", token: "pts1")])
        // Had d1's session come before the long move's end, the backend should have ended it: a duplicate.
        let registered = Self.iosModel()
        let first = try #require(registered.apply(R.ios("start", "s1", "pts1", planned: 100, at: 90)))
        registered.attach(first, "rt1", at: 91)
        registered.device("d2", platform: "ios")
        registered.pushToStartToken("d2", "pts2")
        let other = try #require(registered.apply(R.ios("start", "s1", "pts2", planned: 100, at: 90)))
        registered.attach(other, "rt2", at: 91)
        registered.apply(R.ios("end", "s1", "rt2", planned: 40000, at: 95, dismissal: 995))
        registered.apply(R.ios("start", "s1", "pts1", planned: 120, at: 100))
        #expect(registered.duplicates == [StartKey(stream: "s1", token: "pts1")] && registered.lateSessionDuplicates.isEmpty)
    }
}
