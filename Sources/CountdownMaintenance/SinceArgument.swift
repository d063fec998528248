import CountdownStore
import Foundation

/// `--since T`: an RFC 3339 time (`2026-12-01T20:00:00Z`) or a duration ago (`90s`, `15m`, `2h`, `1d`), measured
/// on the database's clock.
public typealias SinceArgument = TimeCutoff

extension TimeCutoff {
    public static func parse(_ text: String) throws(UsageError) -> SinceArgument {
        if let unit = text.last, let factor = ["s": 1, "m": 60, "h": 3600, "d": 86_400][unit], let count = Int(text.dropLast()),
           count >= 0, count <= 366 * 86_400 / factor {
            return .ago(seconds: count * factor)
        }
        guard let date = try? TimeArgument.parse(text) else {
            throw UsageError("--since must be an RFC 3339 time (2026-12-01T20:00:00Z) or a duration ago (90s, 15m, 2h), got \"\(text)\"")
        }
        return .time(date)
    }
}
