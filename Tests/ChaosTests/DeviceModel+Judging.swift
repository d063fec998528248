import Foundation

extension DeviceModel {
    /// A stream as PostgreSQL has it at the end of a run.
    struct FinalStream: Sendable, Equatable {
        let status: String
        /// The planned start, epoch seconds.
        let planned: Int
    }

    /// The earliest moment a device could get a start of a stream, nil when it never was eligible: (device, stream).
    typealias EligibleSince = (String, String) -> Double?

    /// Violations per invariant (1-5) and the findings behind them; sets `duplicatesLeftShowing`.
    func check(_ streams: [String: FinalStream], eligibleSince: EligibleSince, now: Double) -> [Int: [String]] {
        var violations = Dictionary(uniqueKeysWithValues: Self.invariants.map { ($0.number, [String]()) })
        duplicatesLeftShowing = []
        for device in activities.keys.sorted() {
            let mine = activities[device] ?? []
            // Of a duplicate pair the app's last registration is the session the fleet knows; the other activity is the
            // duplicate's cost (counted under 3, listed in `duplicatesLeftShowing` when it still counts down).
            var judged: [String: ModelActivity] = [:]
            for activity in mine {
                let key = "\(activity.stream)\u{0}\(activity.generation)"
                if let current = judged[key], activity.attached < current.attached { continue }
                judged[key] = activity
            }
            for activity in mine {
                guard judged["\(activity.stream)\u{0}\(activity.generation)"] === activity else {
                    if !activity.ended { duplicatesLeftShowing.append(activity) }
                    continue
                }
                let final = streams[activity.stream]
                if final?.status == "scheduled" {
                    if !activity.ended && activity.shows != final?.planned {
                        violations[1, default: []].append("\(activity): stream planned for \(final.map { String($0.planned) } ?? "None")")
                    }
                } else if !activity.ended {
                    violations[2, default: []].append("\(activity): stream \(final?.status ?? "missing")")
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
        return violations
    }

    /// Eligible devices of streams still scheduled past their T-lead that show nothing for them: (device, stream).
    func lost(_ streams: [String: FinalStream], eligibleSince: EligibleSince, now: Double) -> [(device: String, stream: String)] {
        var showing = Set<String>()
        for activity in activities.values.joined() where !activity.ended {
            showing.insert("\(activity.device)\u{0}\(activity.stream)")
        }
        var missing: [(device: String, stream: String)] = []
        for stream in streams.keys.sorted() {
            guard let final = streams[stream], final.status == "scheduled", Double(final.planned) - lead <= now else { continue }
            for device in platform.keys.sorted() {
                if let since = eligibleSince(device, stream), since < now, !showing.contains("\(device)\u{0}\(stream)") {
                    missing.append((device, stream))
                }
            }
        }
        return missing
    }

    static func twoPlaces(_ value: Double) -> String { String(format: "%.2f", value) }
}
