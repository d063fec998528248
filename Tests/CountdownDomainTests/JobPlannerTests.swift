import Foundation
import Testing
@testable import CountdownDomain

@Suite struct JobPlannerTests {
    let planner = JobPlanner(settings: FlowSettings(startLeadSeconds: 3600, reminderLeadSeconds: 600, expireAfterSeconds: 3600))
    let now = Date(timeIntervalSince1970: 1_776_700_000)

    func due(_ operations: [QueueOperation], _ job: CountdownJob) -> Date? {
        for case .enqueue(let candidate, let dueAt) in operations where candidate == job { return dueAt }
        return nil
    }

    @Test func scheduledStreamGetsStartAtTMinusLeadAndExpireAfterPlanned() {
        let planned = now.addingTimeInterval(7200)
        let operations = planner.planStream(StreamState(id: "s1", status: .scheduled, plannedStartAt: planned), now: now)
        #expect(due(operations, .start(stream: "s1")) == planned.addingTimeInterval(-3600))
        #expect(due(operations, .expire(stream: "s1")) == planned.addingTimeInterval(3600))
        #expect(due(operations, .reminder(stream: "s1")) == nil, "no reminder job without active reminders")
        #expect(due(operations, .update(stream: "s1")) == nil)
    }

    @Test func streamInsideItsHourStartsNow() {
        let planned = now.addingTimeInterval(1200)
        let state = StreamState(id: "s1", status: .scheduled, plannedStartAt: planned, hasActiveReminders: true)
        let operations = planner.planStream(state, now: now)
        #expect(due(operations, .start(stream: "s1")) == now)
        #expect(due(operations, .reminder(stream: "s1")) == planned.addingTimeInterval(-600))
    }

    @Test func completedFanOutsAreNotPlannedAgainForTheSamePlannedTime() {
        let planned = now.addingTimeInterval(300)
        let state = StreamState(id: "s1", status: .scheduled, plannedStartAt: planned, startDoneFor: planned,
                                reminderDoneFor: planned, hasActiveReminders: true)
        let operations = planner.planStream(state, now: now)
        #expect(due(operations, .start(stream: "s1")) == nil)
        #expect(due(operations, .reminder(stream: "s1")) == nil)
        let moved = StreamState(id: "s1", status: .scheduled, plannedStartAt: planned.addingTimeInterval(60), startDoneFor: planned,
                                hasActiveReminders: true, hasSessions: true)
        let afterReschedule = planner.planStream(moved, now: now, rescheduled: true)
        #expect(due(afterReschedule, .start(stream: "s1")) == now)
        #expect(due(afterReschedule, .update(stream: "s1")) == now)
    }

    @Test func aReminderFollowsAMoveLaterThanItsLead() {
        let planned = now.addingTimeInterval(1200)
        func reminder(doneFor: Date?) -> Date? {
            due(planner.planStream(StreamState(id: "s1", status: .scheduled, plannedStartAt: planned, reminderDoneFor: doneFor), now: now),
                .reminder(stream: "s1"))
        }
        #expect(reminder(doneFor: planned.addingTimeInterval(-601)) == planned.addingTimeInterval(-600), "sent again before the new start")
        #expect(reminder(doneFor: planned.addingTimeInterval(-600)) == nil, "a move of the lead or less: not again")
        #expect(reminder(doneFor: planned.addingTimeInterval(900)) == nil, "moved earlier: not again")
        #expect(reminder(doneFor: nil) == nil, "never sent, no active reminders: nothing")
    }

    @Test func pastPlannedStartGetsNoStartOrReminderButStillExpires() {
        let planned = now.addingTimeInterval(-10)
        let operations = planner.planStream(StreamState(id: "s1", status: .scheduled, plannedStartAt: planned, hasActiveReminders: true), now: now)
        #expect(due(operations, .start(stream: "s1")) == nil)
        #expect(due(operations, .reminder(stream: "s1")) == nil)
        #expect(due(operations, .expire(stream: "s1")) == planned.addingTimeInterval(3600))
    }

    @Test(arguments: [StreamStatus.ready, .started, .cancelled, .expired])
    func terminalStatusCancelsPreStartJobsAndEndsSessions(status: StreamStatus) {
        let state = StreamState(id: "s1", status: status, plannedStartAt: now, hasSessions: true)
        let operations = planner.planStream(state, now: now)
        for kind in [CountdownJob.Kind.start, .reminder, .expire, .update] {
            #expect(operations.contains(.cancel(jobID: CountdownJob.streamJobID(kind, stream: "s1"))))
        }
        #expect(due(operations, .end(stream: "s1")) == now)
        let noSessions = planner.planStream(StreamState(id: "s1", status: status, plannedStartAt: now), now: now)
        #expect(due(noSessions, .end(stream: "s1")) == nil)
    }

    @Test func lateGuestIsBackfilledOnlyInsideTheWindow() {
        let inside = StreamState(id: "s1", status: .scheduled, plannedStartAt: now.addingTimeInterval(600))
        #expect(planner.planParticipant(stream: inside, user: "u1", now: now) == [.enqueue(.backfillUser(user: "u1"), dueAt: now)])
        let outside = StreamState(id: "s1", status: .scheduled, plannedStartAt: now.addingTimeInterval(7200))
        #expect(planner.planParticipant(stream: outside, user: "u1", now: now).isEmpty)
        let ended = StreamState(id: "s1", status: .cancelled, plannedStartAt: now.addingTimeInterval(600))
        #expect(planner.planParticipant(stream: ended, user: "u1", now: now).isEmpty)
    }

    @Test func sessionForAnEndedStreamIsEndedAtOnce() {
        let ended = StreamState(id: "s1", status: .started, plannedStartAt: now)
        #expect(planner.planSession(stream: ended, device: "d1", now: now) == [.enqueue(.sessionEnd(stream: "s1", device: "d1"), dueAt: now)])
    }

    /// SPEC 10.1: a session registered for a scheduled stream runs the stream's update job at once (it sends only to
    /// sessions that do not show the current start).
    @Test func sessionForAScheduledStreamRunsItsUpdateJob() {
        let running = StreamState(id: "s1", status: .scheduled, plannedStartAt: now.addingTimeInterval(60))
        #expect(planner.planSession(stream: running, device: "d1", now: now) == [.enqueue(.update(stream: "s1"), dueAt: now)])
        let long = StreamState(id: "s1", status: .scheduled, plannedStartAt: now.addingTimeInterval(-Double(planner.settings.expireAfterSeconds) - 1))
        #expect(planner.planSession(stream: long, device: "d1", now: now).isEmpty, "past its expiry nothing is updated")
    }

    @Test func aSessionRetiredByATakeoverIsEndedAtOnceWhateverTheStreamsState() {
        #expect(planner.planRetired(stream: "s1", device: "d1", now: now) == [.enqueue(.sessionEnd(stream: "s1", device: "d1"), dueAt: now)])
        let row = OutboxRow(id: 1, topic: .retired, streamID: "s1", userID: "u1", deviceID: "d1", rescheduled: false, createdAt: now)
        let running = StreamState(id: "s1", status: .scheduled, plannedStartAt: now.addingTimeInterval(60))
        #expect(row.plan(with: planner, states: ["s1": running], now: now) == [.enqueue(.sessionEnd(stream: "s1", device: "d1"), dueAt: now)])
    }

    @Test func reminderCreatedAfterItsTimeIsSentAtOnce() {
        let soon = StreamState(id: "s1", status: .scheduled, plannedStartAt: now.addingTimeInterval(120))
        #expect(planner.planReminder(stream: soon, now: now) == [.enqueue(.reminder(stream: "s1"), dueAt: now)])
        let later = StreamState(id: "s1", status: .scheduled, plannedStartAt: now.addingTimeInterval(7200))
        #expect(planner.planReminder(stream: later, now: now) == [.enqueue(.reminder(stream: "s1"), dueAt: now.addingTimeInterval(6600))])
        let started = StreamState(id: "s1", status: .scheduled, plannedStartAt: now.addingTimeInterval(-1))
        #expect(planner.planReminder(stream: started, now: now).isEmpty)
    }
}

@Suite struct CountdownJobTests {
    @Test(arguments: [
        CountdownJob.start(stream: "s:1"), .reminder(stream: "s1"), .expire(stream: "s1"), .end(stream: "ş1 ✨"),
        .update(stream: "s1"), .sessionEnd(stream: "a:b", device: "c%d"), .backfillDevice(device: "d1"), .backfillUser(user: "u1"),
        .reminderPage(stream: "s1", after: "", through: "u2000"), .reminderPage(stream: "s1", after: "u2000", through: nil),
    ])
    func roundTripsThroughKindAndPayload(job: CountdownJob) throws {
        let decoded = try CountdownJob.decode(kind: job.kind.rawValue, payload: job.payload).get()
        #expect(decoded == job)
    }

    @Test func idsAreDeterministicAndUnambiguous() {
        #expect(CountdownJob.start(stream: "s1").id == "start:s1")
        #expect(CountdownJob.sessionEnd(stream: "a:b", device: "c").id != CountdownJob.sessionEnd(stream: "a", device: "b:c").id)
        #expect(CountdownJob.streamJobID(.reminder, stream: "x") == CountdownJob.reminder(stream: "x").id)
        #expect(CountdownJob.reminderPage(stream: "s", after: "u:1", through: nil).id == "reminder_page:s:u%3A1")
        #expect(CountdownJob.reminderPage(stream: "s", after: "", through: "u1").streamID == "s")
    }

    @Test func aReminderPageNeedsItsBounds() {
        #expect(throws: JobDecodingError.self) { try CountdownJob.decode(kind: "reminder_page", payload: Array(#"{"stream":"s"}"#.utf8)).get() }
        #expect(throws: JobDecodingError.self) {
            try CountdownJob.decode(kind: "reminder_page", payload: Array(#"{"stream":"s","after":"","through":""}"#.utf8)).get()
        }
    }

    @Test func badPayloadsComeBackAsValues() {
        #expect(throws: JobDecodingError.self) { try CountdownJob.decode(kind: "launch", payload: Array("{}".utf8)).get() }
        #expect(throws: JobDecodingError.self) { try CountdownJob.decode(kind: "start", payload: [0xff, 0x00]).get() }
        #expect(throws: JobDecodingError.self) { try CountdownJob.decode(kind: "start", payload: Array(#"{"device":"d"}"#.utf8)).get() }
        #expect(throws: JobDecodingError.self) { try CountdownJob.decode(kind: "start", payload: Array(#"{"stream":""}"#.utf8)).get() }
        #expect(throws: JobDecodingError.self) { try CountdownJob.decode(kind: "start", payload: Array(#"{"stream":1}"#.utf8)).get() }
        #expect(throws: JobDecodingError.self) { try CountdownJob.decode(kind: "start", payload: Array(#"["stream","s"]"#.utf8)).get() }
    }

    /// Payloads written by an earlier release (Foundation's encoder escapes "/") read as before; one parser only,
    /// so a payload it refuses is undecodable rather than read another way.
    @Test func payloadsOfEarlierReleasesReadAndOnlyTheStrictParserDecides() throws {
        let escaped = Array(#"{"device":"d\/1","stream":"a\/b \u015f"}"#.utf8)
        #expect(try CountdownJob.decode(kind: "session_end", payload: escaped).get() == .sessionEnd(stream: "a/b ş", device: "d/1"))
        let spaced = Array(" {\n \"stream\" : \"s1\" } ".utf8)
        #expect(try CountdownJob.decode(kind: "start", payload: spaced).get() == .start(stream: "s1"))
        let repeated = Array(#"{"stream":"s1","stream":"s1"}"#.utf8)
        #expect(CountdownJob.stringFields(repeated) == nil)
        #expect(throws: JobDecodingError.self) { try CountdownJob.decode(kind: "start", payload: repeated).get() }
    }
}

@Suite struct StartEligibilityTests {
    func device(platform: String = "ios", fcm: String? = "f", pts: String? = "p", enabled: Bool = true) -> DeviceCandidate {
        DeviceCandidate(userID: "u", role: "guest", deviceID: "d", platform: platform, fcmToken: fcm, pushToStartToken: pts,
                        locale: "tr", liveStreamEnabled: enabled)
    }

    @Test func eligibleIOSDeviceWithBothTokens() {
        #expect(StartEligibility.skipReason(for: device()) == nil)
    }

    @Test func skipsWithTheReason() {
        #expect(StartEligibility.skipReason(for: device(platform: "android")) == .notIOS)
        #expect(StartEligibility.skipReason(for: device(fcm: nil)) == .noFCMToken)
        #expect(StartEligibility.skipReason(for: device(fcm: "")) == .noFCMToken)
        #expect(StartEligibility.skipReason(for: device(pts: "")) == .noPushToStartToken)
        #expect(StartEligibility.skipReason(for: device(enabled: false)) == .preferenceOff)
        #expect(StartEligibility.skipReason(for: device(fcm: nil), transport: .apns) == nil, "APNs direct needs no FCM token")
    }

    @Test func androidDevicesWithTheCountdownOn() {
        let android = device(platform: "android", pts: nil)
        #expect(StartEligibility.skipReason(for: android, androidCountdown: true) == nil, "an FCM token is all an Android device needs")
        #expect(StartEligibility.skipReason(for: android, transport: .apns, androidCountdown: true) == nil, "the countdown goes through FCM")
        #expect(StartEligibility.skipReason(for: device(platform: "android", fcm: nil), androidCountdown: true) == .noFCMToken)
        #expect(StartEligibility.skipReason(for: device(platform: "android", fcm: nil), transport: .apns, androidCountdown: true) == .noFCMToken)
        #expect(StartEligibility.skipReason(for: device(platform: "android", enabled: false), androidCountdown: true) == .preferenceOff)
        #expect(StartEligibility.skipReason(for: android, androidCountdown: false) == .notIOS, "off: as before")
        #expect(StartEligibility.skipReason(for: device(platform: "web"), androidCountdown: true) == .notIOS, "web gets nothing")
        #expect(StartEligibility.skipReason(for: device(), androidCountdown: true) == nil, "iOS unchanged")
    }
}
