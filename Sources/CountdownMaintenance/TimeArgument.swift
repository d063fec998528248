import CivilTime
import Foundation

/// Parses an ISO-8601 time with an explicit offset (`2026-12-01T20:00:00+03:00`, `…Z`, fractional seconds allowed).
public enum TimeArgument {
    public static func parse(_ text: String) throws(UsageError) -> Date {
        // The formatter stops at the end of a valid time and ignores what follows: the whole text is checked first.
        guard hasShape(text) else {
            throw UsageError("\"\(text)\" is not an ISO-8601 time with a zone, e.g. 2026-12-01T20:00:00+03:00")
        }
        // The formatter rolls a day past the month's end over (2027-02-30 becomes March 2): every field is checked.
        if let field = outOfRange(text) {
            throw UsageError("\"\(text)\" is not a real time: its \(field) is out of range")
        }
        for options: ISO8601DateFormatter.Options in [[.withInternetDateTime], [.withInternetDateTime, .withFractionalSeconds]] {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = options
            if let date = formatter.date(from: text) { return date }
        }
        throw UsageError("\"\(text)\" is not an ISO-8601 time with a zone, e.g. 2026-12-01T20:00:00+03:00")
    }

    /// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` and nothing else.
    static func hasShape(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        func digits(_ range: Range<Int>) -> Bool { range.upperBound <= bytes.count && bytes[range].allSatisfy { (0x30...0x39).contains($0) } }
        func at(_ index: Int, _ characters: String) -> Bool { index < bytes.count && characters.utf8.contains(bytes[index]) }
        guard digits(0..<4), at(4, "-"), digits(5..<7), at(7, "-"), digits(8..<10), at(10, "Tt"), digits(11..<13), at(13, ":"),
            digits(14..<16), at(16, ":"), digits(17..<19)
        else { return false }
        var index = 19
        if at(index, ".") {
            index += 1
            let start = index
            while digits(index..<index + 1) { index += 1 }
            guard index > start else { return false }
        }
        if index == bytes.count - 1 { return at(index, "Zz") }
        return index == bytes.count - 6 && at(index, "+-") && digits(index + 1..<index + 3) && at(index + 3, ":") && digits(index + 4..<index + 6)
    }

    /// The first field of a well-shaped `text` outside its range (the day against its month and year), or nil.
    static func outOfRange(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int64 { bytes[range].reduce(0) { $0 * 10 + Int64($1 - 0x30) } }
        let (year, month, day) = (number(0..<4), number(5..<7), number(8..<10))
        guard (1...12).contains(month) else { return "month" }
        let date = CivilDate(year: year, month: month, day: day)
        guard day >= 1, CivilDate(daysSinceEpoch: date.daysSinceEpoch) == date else { return "day" }
        guard number(11..<13) <= 23 else { return "hour" }
        guard number(14..<16) <= 59 else { return "minute" }
        guard number(17..<19) <= 59 else { return "second" }
        let zone = bytes.count - 6
        if zone > 18, bytes[zone] == UInt8(ascii: "+") || bytes[zone] == UInt8(ascii: "-") {
            guard number(zone + 1..<zone + 3) <= 23, number(zone + 4..<zone + 6) <= 59 else { return "zone offset" }
        }
        return nil
    }

    /// Formats a time for people: ISO-8601 in UTC.
    public static func format(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }
}
