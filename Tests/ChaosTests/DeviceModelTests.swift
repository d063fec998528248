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

    @Test func aDuplicatesLeftoverCountsUnderThreeNotTwo() throws {
        // The app's later registration is the session; the other activity is the duplicate's cost, under 3.
        let model = Self.iosModel()
        let first = try #require(model.apply(R.ios("start", "s1", "pts1", planned: 100, at: 90)))
        let second = try #require(model.apply(R.ios("start", "s1", "pts1", planned: 100, at: 90.1)))
        model.attach(first, "rtA")
        model.attach(second, "rtB")
        model.apply(R.ios("end", "s1", "rtB", at: 95, reason: "cancelled"))
        let violations = model.check(Self.ended("cancelled", 100), eligibleSince: Self.always, now: 96)
        #expect(violations[2]?.isEmpty == true && violations[3]?.count == 1, "\(violations)")
        #expect(model.duplicatesLeftShowing.count == 1 && model.duplicatesLeftShowing.first === first)
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
        model.apply(R.ios("end", "s1", "rt1", at: 91, reason: "cancelled", dismissal: 91))
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
}
