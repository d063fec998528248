import CountdownDomain
import Foundation
import Testing

@Suite struct SessionUpdatePolicyTests {
    let now = Date(timeIntervalSince1970: 1_776_700_000)
    var planned: Date { now.addingTimeInterval(3600) }

    func need(shown: Date? = nil, startSentAt: Date? = nil, inFlight: Bool = false, changed: Date? = nil) -> SessionUpdatePolicy.Need {
        SessionUpdatePolicy.need(planned: planned, shown: shown, startSentAt: startSentAt, startInFlight: inFlight, plannedChangedAt: changed)
    }

    @Test func aSessionIsUpdatedUnlessItShowsTheCurrentStart() {
        #expect(need(shown: planned, changed: now) == .nothing)
        #expect(need(shown: planned.addingTimeInterval(-60), startSentAt: now) == .update)
        // Never updated: the start carried the time current when it was sent.
        #expect(need(startSentAt: now) == .nothing, "never rescheduled")
        #expect(need(startSentAt: now, changed: now.addingTimeInterval(20)) == .update, "rescheduled after the start: a late session gets the current state")
        #expect(need(startSentAt: now, changed: now.addingTimeInterval(-3)) == .update, "a start sent just after a change may have been built before it")
        #expect(need(startSentAt: now, changed: now.addingTimeInterval(-30)) == .nothing)
        #expect(need() == .update, "start unknown")
    }

    @Test func aSessionWhoseStartIsInFlightWaitsForItsAnswer() {
        #expect(need(inFlight: true) == .awaitingStart, "what the start carried is not known until it is recorded")
        #expect(need(inFlight: true, changed: now) == .awaitingStart)
        #expect(need(startSentAt: now, inFlight: true) == .nothing, "an earlier start of the device was recorded")
        #expect(need(shown: planned.addingTimeInterval(60), inFlight: true) == .update, "an accepted update is known")
    }

    @Test func anActivityStartedMoreThanEightHoursBeforeThePlannedStartIsOutlived() {
        let eightHours = 8 * 3600.0
        #expect(need(startSentAt: planned.addingTimeInterval(-eightHours - 1), changed: now) == .outlived)
        #expect(need(shown: planned.addingTimeInterval(-60), startSentAt: planned.addingTimeInterval(-eightHours - 60)) == .outlived,
                "whatever it shows, it would end before the stream")
        #expect(need(startSentAt: planned.addingTimeInterval(-eightHours), changed: now) == .update, "8 hours exactly: it lives to the start")
    }

    @Test func priorityFollowsTheRule() {
        let later = planned.addingTimeInterval(600)
        #expect(SessionUpdatePolicy.priority(planned: later, shown: planned, now: now) == 5, "later and more than 15 min away")
        #expect(SessionUpdatePolicy.priority(planned: planned, shown: later, now: now) == 10, "earlier")
        #expect(SessionUpdatePolicy.priority(planned: now.addingTimeInterval(900), shown: now.addingTimeInterval(300), now: now) == 10,
                "15 minutes away or less")
        #expect(SessionUpdatePolicy.priority(planned: now.addingTimeInterval(901), shown: now.addingTimeInterval(300), now: now) == 5)
        #expect(SessionUpdatePolicy.priority(planned: later, shown: nil, now: now) == 10, "what the session shows is unknown")
    }
}
