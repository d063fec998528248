import Foundation

/// UTC timestamps like `2026-04-17T00:00:00.000Z`, computed arithmetically (no formatter, no locale).
enum RFC3339 {
    static func milliseconds(_ date: Date) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(24)
        appendMilliseconds(date, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `milliseconds(date)`'s bytes.
    static func appendMilliseconds(_ date: Date, to out: inout [UInt8]) {
        // Whole microseconds first, so binary representation error cannot pull a millisecond down.
        let totalMs = floorDivide(Int64((date.timeIntervalSince1970 * 1_000_000).rounded()), 1000)
        let msPerDay: Int64 = 86_400_000
        let days = floorDivide(totalMs, msPerDay)
        let msOfDay = totalMs - days * msPerDay
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        let seconds = msOfDay / 1000
        appendPadded(year, 4, to: &out)
        out.append(UInt8(ascii: "-"))
        appendPadded(month, 2, to: &out)
        out.append(UInt8(ascii: "-"))
        appendPadded(day, 2, to: &out)
        out.append(UInt8(ascii: "T"))
        appendPadded(seconds / 3600, 2, to: &out)
        out.append(UInt8(ascii: ":"))
        appendPadded(seconds / 60 % 60, 2, to: &out)
        out.append(UInt8(ascii: ":"))
        appendPadded(seconds % 60, 2, to: &out)
        out.append(UInt8(ascii: "."))
        appendPadded(msOfDay % 1000, 3, to: &out)
        out.append(UInt8(ascii: "Z"))
    }

    /// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
    private static func civilDate(daysSinceEpoch: Int64) -> (Int64, Int64, Int64) {
        let z = daysSinceEpoch + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        value >= 0 ? value / divisor : (value - divisor + 1) / divisor
    }

    /// `value` in decimal, zero-padded to `width` characters.
    private static func appendPadded(_ value: Int64, _ width: Int, to out: inout [UInt8]) {
        let digits = String(value)
        let count = digits.utf8.count
        if count < width { out.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: width - count)) }
        out.append(contentsOf: digits.utf8)
    }
}
