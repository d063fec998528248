import CountdownDomain
import Foundation
import Testing

/// Which planned start a push accepted at a given time carried (SPEC 12.2: the start counts as what an activity shows).
@Suite struct PlannedStartTimelineTests {
    let t0 = Date(timeIntervalSince1970: 1_776_700_000)
    func at(_ seconds: Double) -> Date { t0.addingTimeInterval(seconds) }
    /// Planned A until 100 s, B until 200 s, A again since (C is none of them).
    let a = Date(timeIntervalSince1970: 1_776_710_000)
    let b = Date(timeIntervalSince1970: 1_776_712_000)
    var timeline: PlannedStartTimeline {
        PlannedStartTimeline(moves: [.init(at: at(200), old: b, new: a), .init(at: at(100), old: a, new: b)], current: a)
    }

    @Test func aStartCarriesThePlannedStartInForceWhenItWasBuiltAndAccepted() {
        #expect(timeline.carriedByStart(sentAt: at(50), buildMargin: 5) == a, "before the first move: its old value")
        #expect(timeline.carriedByStart(sentAt: at(150), buildMargin: 5) == b)
        #expect(timeline.carriedByStart(sentAt: at(300), buildMargin: 5) == a, "moved back: the current value")
        #expect(PlannedStartTimeline.unmoved(a).carriedByStart(sentAt: at(0), buildMargin: 5) == a)
    }

    @Test func aStartAcceptedJustAfterAMoveMayCarryEitherValue() {
        #expect(timeline.carriedByStart(sentAt: at(103), buildMargin: 5) == nil, "built up to 5 s before it was recorded")
        #expect(timeline.carriedByStart(sentAt: at(106), buildMargin: 5) == b)
        #expect(timeline.carriedByStart(sentAt: at(150), buildMargin: 5, firstAttemptAfter: at(90)) == nil,
                "sent more than once since before the move: the device applied whichever came first")
        #expect(timeline.carriedByStart(sentAt: at(150), buildMargin: 5, firstAttemptAfter: at(120)) == b)
    }

    @Test func timesBeforeUnrecordedMovesAreUnknown() {
        let partial = PlannedStartTimeline(moves: timeline.moves, current: a, knownAfter: at(100))
        #expect(partial.carriedByStart(sentAt: at(50), buildMargin: 5) == nil)
        #expect(partial.carriedByStart(sentAt: at(150), buildMargin: 5) == b)
        let unrecorded = PlannedStartTimeline(moves: [], current: a, knownAfter: at(100))
        #expect(unrecorded.carriedByStart(sentAt: at(104), buildMargin: 5) == nil)
        #expect(unrecorded.carriedByStart(sentAt: at(106), buildMargin: 5) == a)
    }
}
