import CivilTime
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
        let totalMs = CivilDate.floorDivide(Int64((date.timeIntervalSince1970 * 1_000_000).rounded()), 1000)
        let msPerDay: Int64 = 86_400_000
        let days = CivilDate.floorDivide(totalMs, msPerDay)
        let msOfDay = totalMs - days * msPerDay
        let date = CivilDate(daysSinceEpoch: days)
        let seconds = msOfDay / 1000
        appendPadded(date.year, 4, to: &out)
        out.append(UInt8(ascii: "-"))
        appendPadded(date.month, 2, to: &out)
        out.append(UInt8(ascii: "-"))
        appendPadded(date.day, 2, to: &out)
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

    /// `value` in decimal, zero-padded to `width` characters.
    private static func appendPadded(_ value: Int64, _ width: Int, to out: inout [UInt8]) {
        let digits = String(value)
        let count = digits.utf8.count
        if count < width { out.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: width - count)) }
        out.append(contentsOf: digits.utf8)
    }
}
