import CountdownDomain
import Foundation
import PushPayloads
import Testing

/// Which message an Android device gets for a change of its stream (SPEC 10.4), and how the state moves on.
@Suite struct AndroidCountdownStateTests {
    let planned = Date(timeIntervalSince1970: 1_776_708_000)
    let now = Date(timeIntervalSince1970: 1_776_705_330)

    func decide(_ state: AndroidCountdownState, _ change: AndroidCountdownChange, planned: Date? = nil, now: Date? = nil)
        -> AndroidCountdownDecision {
        state.decide(change, plannedStart: planned ?? self.planned, now: now ?? self.now, endDismissAfterSeconds: 900, expireAfterSeconds: 3600)
    }

    @Test func aNewDeviceGetsAHighStartWithSeqOneAndTheSecondsToTheStart() {
        #expect(decide(.none, .start) == .send(AndroidCountdownStep(event: .start, seq: 1, priority: .high, ttlSeconds: 2670)))
    }

    @Test func aStartIsSentOncePerDeviceAndStream() {
        let sent = AndroidCountdownState(lastSeq: 1)
        #expect(decide(sent, .start) == .skip(.duplicate))
        let accepted = AndroidCountdownState(lastSeq: 1, lastAcceptedStart: planned)
        #expect(decide(accepted, .start) == .skip(.duplicate))
    }

    @Test func aStartAtOrAfterThePlannedStartIsTooLate() {
        #expect(decide(.none, .start, now: planned) == .skip(.tooLate))
        #expect(decide(.none, .start, now: planned.addingTimeInterval(5)) == .skip(.tooLate))
    }

    @Test func aRescheduleUpdatesOnlyAStartedCountdownWithThePriorityRule() {
        #expect(decide(.none, .reschedule) == .skip(.noCountdown))
        let live = AndroidCountdownState(lastSeq: 1, lastAcceptedStart: planned)
        let later = planned.addingTimeInterval(3600)
        #expect(decide(live, .reschedule, planned: later) == .send(AndroidCountdownStep(event: .update, seq: 2, priority: .normal, ttlSeconds: 6270)))
        let earlier = planned.addingTimeInterval(-1200)
        #expect(decide(live, .reschedule, planned: earlier) == .send(AndroidCountdownStep(event: .update, seq: 2, priority: .high, ttlSeconds: 1470)))
        let soon = now.addingTimeInterval(600)
        let soonLive = AndroidCountdownState(lastSeq: 1, lastAcceptedStart: now.addingTimeInterval(300))
        #expect(decide(soonLive, .reschedule, planned: soon) == .send(AndroidCountdownStep(event: .update, seq: 2, priority: .high, ttlSeconds: 600)))
        let neverAccepted = AndroidCountdownState(lastSeq: 1)
        #expect(decide(neverAccepted, .reschedule, planned: later)
            == .send(AndroidCountdownStep(event: .update, seq: 2, priority: .high, ttlSeconds: 6270)), "unknown last start: HIGH")
    }

    @Test func aReRegisteredDeviceGetsAStartWithTheCurrentState() {
        #expect(decide(.none, .reRegistered) == .skip(.noCountdown))
        let live = AndroidCountdownState(lastSeq: 3, lastAcceptedStart: planned)
        #expect(decide(live, .reRegistered) == .send(AndroidCountdownStep(event: .start, seq: 4, priority: .high, ttlSeconds: 2670)))
    }

    @Test func anEndIsHighLivesUntilTheCountdownsStaleAtAndIsFinal() {
        let live = AndroidCountdownState(lastSeq: 2, lastAcceptedStart: planned)
        // staleAt = planned + 3600 s, 2670 + 3600 s from now: longer than the 900 s dismissal window (SPEC 12.2).
        let step = AndroidCountdownStep(event: .end, seq: 3, priority: .high, ttlSeconds: 6270, endReason: .cancelled)
        #expect(decide(live, .end(.cancelled)) == .send(step))
        #expect(decide(.none, .end(.started)) == .skip(.noCountdown))
        let takeover = decide(live, .end(.cancelled, dismissNow: true))
        #expect(takeover == .send(AndroidCountdownStep(event: .end, seq: 3, priority: .high, ttlSeconds: 6270, endReason: .cancelled, dismissNow: true)))
        let wellAfterStale = decide(live, .end(.expired), now: planned.addingTimeInterval(7200))
        #expect(wellAfterStale == .send(AndroidCountdownStep(event: .end, seq: 3, priority: .high, ttlSeconds: 900, endReason: .expired)),
                "past staleAt: the dismissal window")

        let ended = live.recording(step, accepted: true, plannedStart: planned)
        #expect(ended.ended)
        for change in [AndroidCountdownChange.start, .reschedule, .reRegistered, .end(.expired)] {
            #expect(decide(ended, change) == .skip(.ended), "\(change)")
        }
    }

    @Test func recordingSpendsTheSeqAndKeepsOnlyAcceptedStarts() {
        let start = AndroidCountdownStep(event: .start, seq: 1, priority: .high, ttlSeconds: 2670)
        let refused = AndroidCountdownState.none.recording(start, accepted: false, plannedStart: planned)
        #expect(refused == AndroidCountdownState(lastSeq: 1, lastAcceptedStart: nil, ended: false))
        let accepted = AndroidCountdownState.none.recording(start, accepted: true, plannedStart: planned)
        #expect(accepted.lastAcceptedStart == planned)

        let later = planned.addingTimeInterval(3600)
        let update = AndroidCountdownStep(event: .update, seq: 2, priority: .normal, ttlSeconds: 6270)
        #expect(accepted.recording(update, accepted: false, plannedStart: later).lastAcceptedStart == planned)
        #expect(accepted.recording(update, accepted: true, plannedStart: later).lastAcceptedStart == later)
        let stale = AndroidCountdownState(lastSeq: 5).recording(update, accepted: true, plannedStart: later)
        #expect(stale.lastSeq == 5, "seq never goes back")

        let end = AndroidCountdownStep(event: .end, seq: 3, priority: .high, ttlSeconds: 900, endReason: .ready)
        #expect(!accepted.recording(end, accepted: false, plannedStart: planned).ended, "an end not accepted is retried")
    }

    @Test func skipReasonsAreMetricLabels() {
        #expect(AndroidCountdownSkip.allCases.map(\.rawValue) == ["duplicate", "no_countdown", "ended", "too_late"])
    }
}
