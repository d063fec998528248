import Foundation
import PushPayloads

/// What the fleet knows of one Android device's countdown for one stream (SPEC 10.4; the start ledger row is
/// the Android session): the last `seq` it sent there, the planned start the device last accepted, and whether
/// the countdown has ended. Pure: `decide` says what a change means for the device, `recording` moves the state on.
public struct AndroidCountdownState: Sendable, Equatable {
    /// The `seq` of the last message sent to the device for this stream (0: none yet). A message gets the next
    /// one before it is sent, so a resend after a crash carries the same `seq` and the app ignores it.
    public var lastSeq: Int
    /// `scheduledStartAt` of the last start or update FCM accepted for the device (nil: none accepted yet): what it
    /// shows, the start included (SPEC 12.2).
    public var lastAcceptedStart: Date?
    /// An end was accepted: nothing more goes to the device for this stream (`end` is final on the device too).
    public var ended: Bool

    public init(lastSeq: Int = 0, lastAcceptedStart: Date? = nil, ended: Bool = false) {
        self.lastSeq = lastSeq
        self.lastAcceptedStart = lastAcceptedStart
        self.ended = ended
    }

    /// A device that never got a countdown for the stream.
    public static let none = AndroidCountdownState()
}

/// What happened to a stream or device that may concern its Android countdown.
public enum AndroidCountdownChange: Sendable, Equatable {
    /// The start job or a backfill found the device eligible inside the stream's window.
    case start
    /// The stream's planned start changed.
    case reschedule
    /// The device registered a new `fcm_token` while its countdown is live: it gets a `start` with the current state.
    case reRegistered
    /// The stream ended (`dismissNow`: a takeover of the device by another user, `dismissAt` = now).
    case end(EndReason, dismissNow: Bool = false)
}

/// The message a device gets: event, `seq`, and the `android` options of SPEC 10.4's table.
public struct AndroidCountdownStep: Sendable, Equatable {
    public var event: LiveActivityEvent
    public var seq: Int
    public var priority: AndroidPriority
    public var ttlSeconds: Int
    /// nil unless `event` is `.end`.
    public var endReason: EndReason?
    public var dismissNow: Bool

    public init(event: LiveActivityEvent, seq: Int, priority: AndroidPriority, ttlSeconds: Int, endReason: EndReason? = nil,
                dismissNow: Bool = false) {
        self.event = event
        self.seq = seq
        self.priority = priority
        self.ttlSeconds = ttlSeconds
        self.endReason = endReason
        self.dismissNow = dismissNow
    }
}

/// Why a device gets nothing for a change. Raw values are metric labels and ledger reasons.
public enum AndroidCountdownSkip: String, Sendable, Equatable, CaseIterable {
    /// A start for a device that already has (or had) the stream's countdown: once per device and stream.
    case duplicate
    /// An update or end for a device that never got a start: it shows nothing to change.
    case noCountdown = "no_countdown"
    /// The device's countdown has ended: `end` is final.
    case ended
    /// A start at or after the planned start: there is nothing left to count down.
    case tooLate = "too_late"
}

/// `send` the step, or `skip` for a reason.
public enum AndroidCountdownDecision: Sendable, Equatable {
    case send(AndroidCountdownStep)
    case skip(AndroidCountdownSkip)
}

extension AndroidCountdownState {
    /// What `change` means for this device, for a stream planned at `plannedStart`, at `now`.
    public func decide(
        _ change: AndroidCountdownChange, plannedStart: Date, now: Date, endDismissAfterSeconds: Int, expireAfterSeconds: Int
    ) -> AndroidCountdownDecision {
        if ended { return .skip(.ended) }
        let seq = lastSeq + 1
        let countdownTTL = AndroidCountdownMessage.countdownTTLSeconds(plannedStart: plannedStart, now: now)
        switch change {
        case .start:
            if lastSeq > 0 { return .skip(.duplicate) }
            if now >= plannedStart { return .skip(.tooLate) }
            return .send(AndroidCountdownStep(event: .start, seq: seq, priority: .high, ttlSeconds: countdownTTL))
        case .reRegistered:
            if lastSeq == 0 { return .skip(.noCountdown) }
            return .send(AndroidCountdownStep(event: .start, seq: seq, priority: .high, ttlSeconds: countdownTTL))
        case .reschedule:
            if lastSeq == 0 { return .skip(.noCountdown) }
            let priority = UpdatePriority.of(newStart: plannedStart, shown: lastAcceptedStart, now: now).android
            return .send(AndroidCountdownStep(event: .update, seq: seq, priority: priority, ttlSeconds: countdownTTL))
        case let .end(reason, dismissNow):
            if lastSeq == 0 { return .skip(.noCountdown) }
            return .send(AndroidCountdownStep(
                event: .end, seq: seq, priority: .high,
                ttlSeconds: AndroidCountdownMessage.endTTLSeconds(endDismissAfterSeconds: endDismissAfterSeconds, plannedStart: plannedStart,
                                                                  expireAfterSeconds: expireAfterSeconds, now: now), endReason: reason,
                dismissNow: dismissNow))
        }
    }

    /// The state after `step` was sent (its `seq` is spent whatever the answer) and, when `accepted`, applied:
    /// a start or update accepted records `plannedStart` as the device's; an end accepted is final.
    public func recording(_ step: AndroidCountdownStep, accepted: Bool, plannedStart: Date) -> AndroidCountdownState {
        var next = self
        next.lastSeq = max(lastSeq, step.seq)
        guard accepted else { return next }
        if step.event == .end {
            next.ended = true
        } else {
            next.lastAcceptedStart = plannedStart
        }
        return next
    }
}
