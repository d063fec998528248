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

    /// An end is kept until the latest countdown its device may show goes stale (SPEC 12.2): one whose device missed
    /// the move to the earlier start still shows the later one.
    @Test func theLatestPlannedStartSinceACountdownStartedCountsEveryValueSinceThen() {
        #expect(timeline.latest(since: at(50)) == b, "A then, B after the first move: the later")
        #expect(timeline.latest(since: at(150)) == b, "B then, though the stream moved back to A")
        #expect(timeline.latest(since: at(200)) == b, "a move at that instant counts")
        #expect(timeline.latest(since: at(250)) == a, "A since")
        let earlier = PlannedStartTimeline(moves: [.init(at: at(100), old: b, new: a)], current: a)
        #expect(earlier.latest(since: at(50)) == b, "moved earlier since: the start before the move")
        #expect(PlannedStartTimeline.unmoved(a).latest(since: at(0)) == a)
    }
}
