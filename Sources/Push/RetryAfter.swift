import Foundation

/// Parses a `Retry-After` header: delay seconds (`"120"`) or an HTTP-date (`"Wed, 21 Oct 2026 07:28:00 GMT"`).
public enum RetryAfter {
    /// Longest delay accepted from a server; anything longer is capped.
    public static let maximum: Duration = .seconds(86_400)

    /// The delay from `now`, or nil when the header is absent or unreadable. A date in the past gives zero.
    public static func parse(_ value: String?, now: Date) -> Duration? {
        guard let text = value?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        if text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            guard let seconds = Int64(text) else { return maximum }
            return min(.seconds(seconds), maximum)
        }
        guard let date = httpDate(text) else { return nil }
        let seconds = date.timeIntervalSince(now)
        if seconds <= 0 { return .zero }
        return min(.milliseconds(Int64((seconds * 1000).rounded(.up))), maximum)
    }

    private static func httpDate(_ text: String) -> Date? {
        // IMF-fixdate first, then the two obsolete forms RFC 9110 still asks recipients to accept.
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}
