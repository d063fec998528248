import Foundation
import TestSupport

extension DeviceModel {
    /// A stream as PostgreSQL has it at the end of a run.
    struct FinalStream: Sendable, Equatable {
        let status: String
        /// The planned start, epoch seconds.
        let planned: Int
        /// When it left `scheduled` (wall clock, epoch seconds), where the run knows it: an end could go out from then.
        var endedAt: Double? = nil
    }

    /// The earliest moment a device could get a start of a stream, nil when it never was eligible: (device, stream).
    typealias EligibleSince = (String, String) -> Double?

    /// The `endedReason`s that tell the truth about a stream that ended as `status`.
    static func truthfulReasons(_ status: String) -> Set<String> {
        switch status {
        case "started": ["ready", "started"]
        default: [status]
        }
    }

    /// Violations per invariant (1-6) and the findings behind them. Every activity is judged, duplicates included:
    /// the backend keeps a session per activity and must update and end each (SPEC 12.1); one the app ended itself
    /// needs nothing more.
    /// `inFlight`: the starts in flight at the kills, named in a finding about an activity they opened.
    func check(_ streams: [String: FinalStream], eligibleSince: EligibleSince, now: Double, inFlight: Set<StartKey> = []) -> [Int: [String]] {
        var violations = Dictionary(uniqueKeysWithValues: Self.invariants.map { ($0.number, [String]()) })
        for device in activities.keys.sorted() {
            for activity in activities[device] ?? [] {
                var found: [Int: [String]] = [:]
                judge(activity, streams[activity.stream], into: &found)
                let note = inFlight.contains(activity.startKey) ? " (its start was in flight at a kill)" : ""
                for (number, texts) in found {
                    violations[number, default: []] += texts.map { $0 + note }
                }
            }
        }
        for key in duplicates {
            violations[3, default: []].append("duplicate start \(key.stream) \(key.token.suffix(8))")
        }
        for start in starts {
            guard let since = eligibleSince(start.device, start.stream) else {
                violations[4, default: []].append("start of \(start.stream) to ineligible \(start.device)")
                continue
            }
            if start.receivedAt < since {
                violations[4, default: []].append("start of \(start.stream) to \(start.device) \(Self.twoPlaces(since - start.receivedAt))s before it was eligible")
            } else if let planned = start.planned, start.receivedAt < Double(planned) - lead - 0.5 {
                violations[4, default: []].append(
                    "start of \(start.stream) to \(start.device) \(Self.twoPlaces(Double(planned) - lead - start.receivedAt))s before T-lead")
            }
        }
        for found in afterEnd {
            violations[5, default: []].append("\(found.event) to \(found.device) for \(found.stream) after its end")
        }
        for (activity, after) in updatesAfterAppEnd where after > Self.appEndGrace {
            violations[5, default: []].append("update to \(activity) \(Self.twoPlaces(after))s after the app deleted its session")
        }
        return violations
    }

    /// Invariants 1, 2 and 6 for one activity or countdown.
    private func judge(_ activity: ModelActivity, _ final: FinalStream?, into violations: inout [Int: [String]]) {
        guard let final else {
            violations[2, default: []].append("\(activity): stream missing")
            return
        }
        if activity.endedByAppAt != nil { return }
        if final.status == "scheduled" {
            if !activity.ended && activity.shows != final.planned && !activity.expiredAway.contains(final.planned) {
                violations[1, default: []].append("\(activity): stream planned for \(final.planned)")
            }
            if activity.ended, let reason = activity.endedReason {
                violations[6, default: []].append("\(activity): ended '\(reason)' for a stream still scheduled")
            }
            return
        }
        guard activity.ended else {
            if let expired = activity.endExpiredAt, let stale = activity.staleAt, expired >= stale {
                return  // The end expired while the phone was away, and the countdown had gone stale by its return.
            }
            let why = activity.endExpiredAt.map { " (its end expired at \(Self.twoPlaces($0)), before the countdown went stale at \(activity.staleAt.map { Self.twoPlaces($0) } ?? "None"))" } ?? ""
            violations[2, default: []].append("\(activity): stream \(final.status)\(why)")
            return
        }
        // Without a reason: the long move's end, true only while the stream was still scheduled.
        let endedBeforeStream = (activity.endSentAt ?? 0) < (final.endedAt ?? 0)
        if let reason = activity.endedReason {
            if !Self.truthfulReasons(final.status).contains(reason) {
                violations[6, default: []].append("\(activity): stream \(final.status)")
            }
        } else if !endedBeforeStream {
            violations[6, default: []].append("\(activity): ended without a reason, stream \(final.status)")
        }
        if let endedAt = final.endedAt, let sent = activity.endSentAt {
            let couldFrom = max(endedAt, activity.startSentAt, activity.registeredAt ?? 0)
            if sent - couldFrom > Self.endWithin {
                violations[2, default: []].append("\(activity): ended \(Self.twoPlaces(sent - couldFrom))s after it could have been")
            }
        }
    }

    /// Eligible devices of streams still scheduled past their T-lead that show nothing for them: (device, stream). A
    /// phone that came back to find a held message expired or replaced is not counted (its start may rightly be gone).
    func lost(_ streams: [String: FinalStream], eligibleSince: EligibleSince, now: Double) -> [(device: String, stream: String)] {
        var showing = Set<String>()
        for activity in activities.values.joined() where !activity.ended {
            showing.insert("\(activity.device)\u{0}\(activity.stream)")
        }
        var missing: [(device: String, stream: String)] = []
        for stream in streams.keys.sorted() {
            guard let final = streams[stream], final.status == "scheduled", Double(final.planned) - lead <= now else { continue }
            for device in platform.keys.sorted() where !droppedAway.contains(device) {
                if let since = eligibleSince(device, stream), since < now, !showing.contains("\(device)\u{0}\(stream)") {
                    missing.append((device, stream))
                }
            }
        }
        return missing
    }

    static func twoPlaces(_ value: Double) -> String { String(format: "%.2f", value) }
}
