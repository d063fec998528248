import CountdownDomain
import Foundation
import Testing

@Suite struct SessionUpdatePolicyTests {
    let now = Date(timeIntervalSince1970: 1_776_700_000)
    var planned: Date { now.addingTimeInterval(3600) }

    @Test func aSessionIsUpdatedUnlessItShowsTheCurrentStart() {
        #expect(!SessionUpdatePolicy.needsUpdate(planned: planned, shown: planned, startSentAt: nil, plannedChangedAt: now))
        #expect(SessionUpdatePolicy.needsUpdate(planned: planned, shown: planned.addingTimeInterval(-60), startSentAt: now, plannedChangedAt: nil))
        // Never updated: the start carried the time current when it was sent.
        #expect(!SessionUpdatePolicy.needsUpdate(planned: planned, shown: nil, startSentAt: now, plannedChangedAt: nil), "never rescheduled")
        #expect(SessionUpdatePolicy.needsUpdate(planned: planned, shown: nil, startSentAt: now, plannedChangedAt: now.addingTimeInterval(20)),
                "rescheduled after the start: a late session gets the current state")
        #expect(SessionUpdatePolicy.needsUpdate(planned: planned, shown: nil, startSentAt: now, plannedChangedAt: now.addingTimeInterval(-3)),
                "a start sent just after a change may have been built before it")
        #expect(!SessionUpdatePolicy.needsUpdate(planned: planned, shown: nil, startSentAt: now, plannedChangedAt: now.addingTimeInterval(-30)))
        #expect(SessionUpdatePolicy.needsUpdate(planned: planned, shown: nil, startSentAt: nil, plannedChangedAt: nil), "start unknown")
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
