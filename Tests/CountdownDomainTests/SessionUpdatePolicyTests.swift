import CountdownDomain
import Foundation
import Testing

@Suite struct SessionUpdatePolicyTests {
    let now = Date(timeIntervalSince1970: 1_776_700_000)
    var planned: Date { now.addingTimeInterval(3600) }

    func need(shown: Date? = nil, startSentAt: Date? = nil, inFlight: Bool = false) -> SessionUpdatePolicy.Need {
        SessionUpdatePolicy.need(planned: planned, shown: shown, startSentAt: startSentAt, startInFlight: inFlight)
    }

    @Test func aSessionIsUpdatedUnlessItShowsTheCurrentStart() {
        #expect(need(shown: planned) == .nothing)
        #expect(need(shown: planned, startSentAt: now) == .nothing)
        #expect(need(shown: planned.addingTimeInterval(-60), startSentAt: now) == .update)
        #expect(need(startSentAt: now) == .update, "what the start carried is not known")
        #expect(need() == .update, "start unknown")
    }

    @Test func aSessionWhoseStartIsInFlightWaitsForItsAnswer() {
        #expect(need(inFlight: true) == .awaitingStart, "what the start carried is not known until it is recorded")
        #expect(need(shown: planned, startSentAt: now, inFlight: true) == .nothing, "an earlier start of the device was recorded")
        #expect(need(shown: planned.addingTimeInterval(60), inFlight: true) == .update, "an accepted update is known")
    }

    @Test func anActivityStartedMoreThanEightHoursBeforeThePlannedStartIsOutlived() {
        let eightHours = 8 * 3600.0
        #expect(need(startSentAt: planned.addingTimeInterval(-eightHours - 1)) == .outlived)
        #expect(need(shown: planned.addingTimeInterval(-60), startSentAt: planned.addingTimeInterval(-eightHours - 60)) == .outlived,
                "whatever it shows, it would end before the stream")
        #expect(need(startSentAt: planned.addingTimeInterval(-eightHours)) == .update, "8 hours exactly: it lives to the start")
    }

    /// SPEC 12.2: what an activity shows is the planned start of the last push accepted for it, the start included.
    @Test func anActivityShowsItsLastAcceptedPushTheStartIncluded() {
        let (carried, updated) = (planned.addingTimeInterval(-600), planned.addingTimeInterval(600))
        let shown = SessionUpdatePolicy.shown
        #expect(shown(nil, now, carried) == carried, "only the start: what it carried")
        #expect(shown((updated, now.addingTimeInterval(60)), now, carried) == updated, "an update accepted after the start")
        #expect(shown((updated, now.addingTimeInterval(-60)), now, carried) == carried,
                "a push-to-start accepted after the update (a new activity) is what shows")
        #expect(shown((updated, now), nil, nil) == updated)
        #expect(shown(nil, now, nil) == nil, "a start whose planned start is not known")
        #expect(shown(nil, nil, nil) == nil)
    }
}
