import Foundation

/// Parses an ISO-8601 time with an explicit offset (`2026-12-01T20:00:00+03:00`, `…Z`, fractional seconds allowed).
public enum TimeArgument {
    public static func parse(_ text: String) throws(UsageError) -> Date {
        for options: ISO8601DateFormatter.Options in [[.withInternetDateTime], [.withInternetDateTime, .withFractionalSeconds]] {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = options
            if let date = formatter.date(from: text) { return date }
        }
        throw UsageError("\"\(text)\" is not an ISO-8601 time with a zone, e.g. 2026-12-01T20:00:00+03:00")
    }

    /// Formats a time for people: ISO-8601 in UTC.
    public static func format(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }
}
