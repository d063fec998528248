import CivilTime
import Foundation

/// How the console shows a time: absolute in the viewer's zone (UTC unless they chose one: the `tz` query
/// parameter, else the `countdown_console_tz` cookie `/zone` sets), and how far ago or ahead of `now`.
public struct ConsoleTimes: Sendable {
    public let now: Date
    public let zone: TimeZone

    public init(now: Date, zone: TimeZone = ConsoleTimes.utc) {
        self.now = now
        self.zone = zone
    }

    /// The cookie that keeps the viewer's zone.
    public static let cookie = "countdown_console_tz"

    public static let utc = TimeZone.gmt

    /// The zone called `name` (an IANA name such as `Europe/Istanbul`, or `UTC`), or nil when there is none.
    public static func zone(named name: String) -> TimeZone? {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/_+-".utf8)
        guard !name.isEmpty, name.utf8.count <= 64, name.utf8.allSatisfy(allowed.contains) else { return nil }
        if name == "UTC" { return utc }
        return TimeZone(identifier: name)
    }

    /// The same `now` in another zone.
    public func inZone(_ other: TimeZone) -> ConsoleTimes { ConsoleTimes(now: now, zone: other) }

    /// `2026-12-06 11:35 +03:00`, or `2026-12-06 08:35 UTC`, to the second when `seconds`.
    public func absolute(_ date: Date, seconds: Bool = false) -> String {
        let offset = Int64(zone.secondsFromGMT(for: date))
        let local = Int64(date.timeIntervalSince1970.rounded(.down)) + offset
        let day = CivilDate.floorDivide(local, 86_400)
        let ofDay = local - day * 86_400
        var text = "\(CivilDate(daysSinceEpoch: day)) \(CivilDate.padded(ofDay / 3600, 2)):\(CivilDate.padded(ofDay % 3600 / 60, 2))"
        if seconds { text += ":" + CivilDate.padded(ofDay % 60, 2) }
        if zone == Self.utc || zone.identifier == "UTC" { return text + " UTC" }
        let sign = offset < 0 ? "-" : "+"
        return text + " \(sign)\(CivilDate.padded(abs(offset) / 3600, 2)):\(CivilDate.padded(abs(offset) % 3600 / 60, 2))"
    }

    /// `in 49 min`, `3 h 5 min ago`, `now` (within 30 s), `in 2 d 4 h`.
    public func relative(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince(now).rounded())
        let span = abs(seconds)
        guard span >= 30 else { return "now" }
        let text: String
        switch span {
        case ..<90: text = "\(span) s"
        case ..<3600: text = "\((span + 30) / 60) min"
        case ..<86_400: text = "\(span / 3600) h" + (span % 3600 / 60 > 0 ? " \(span % 3600 / 60) min" : "")
        default: text = "\(span / 86_400) d" + (span % 86_400 / 3600 > 0 ? " \(span % 86_400 / 3600) h" : "")
        }
        return seconds > 0 ? "in \(text)" : "\(text) ago"
    }
}
