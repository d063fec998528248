import CivilTime
import Foundation

/// Text form of timestamps with microsecond precision, computed with integer calendar arithmetic (UTC).
enum PostgresTimestamp {
    private static let microsPerSecond: Int64 = 1_000_000
    private static let microsPerDay: Int64 = 86_400 * microsPerSecond
    /// Microseconds between 1970-01-01 and 2001-01-01, `Date`'s reference.
    private static let referenceOffsetMicros: Int64 = 978_307_200 * microsPerSecond

    /// `YYYY-MM-DDTHH:MM:SS.ffffff+00:00`.
    static func format(_ date: Date) -> String {
        let micros = Int64((date.timeIntervalSinceReferenceDate * 1_000_000).rounded()) + referenceOffsetMicros
        let days = CivilDate.floorDivide(micros, microsPerDay)
        let date = CivilDate(daysSinceEpoch: days)
        var rest = micros - days * microsPerDay
        let hour = rest / (3600 * microsPerSecond)
        rest -= hour * 3600 * microsPerSecond
        let minute = rest / (60 * microsPerSecond)
        rest -= minute * 60 * microsPerSecond
        let second = rest / microsPerSecond
        let fraction = rest - second * microsPerSecond
        let pad = CivilDate.padded
        return "\(date)T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)).\(pad(fraction, 6))+00:00"
    }

    /// Reads `YYYY-MM-DD[( |T)HH:MM[:SS[.f...]]][Z|±HH[[:]MM[[:]SS]]]`; no offset means UTC.
    static func parse(_ text: String) -> Date? {
        var scanner = Scanner(Array(text.utf8))
        guard let year = scanner.number(minDigits: 4, maxDigits: 6), scanner.skip("-"),
              let month = scanner.number(digits: 2), (1...12).contains(month), scanner.skip("-"),
              let day = scanner.number(digits: 2), (1...31).contains(day)
        else { return nil }
        var micros = CivilDate(year: year, month: month, day: day).daysSinceEpoch * microsPerDay
        if scanner.skip(" ") || scanner.skip("T") {
            guard let hour = scanner.number(digits: 2), hour <= 24, scanner.skip(":"),
                  let minute = scanner.number(digits: 2), minute < 60
            else { return nil }
            var second: Int64 = 0
            var fraction: Int64 = 0
            if scanner.skip(":") {
                guard let value = scanner.number(digits: 2), value <= 60 else { return nil }
                second = value
                if scanner.skip(".") {
                    guard let value = scanner.fraction() else { return nil }
                    fraction = value
                }
            }
            micros += ((hour * 60 + minute) * 60 + second) * microsPerSecond + fraction
        }
        guard let offset = scanner.offsetSeconds(), scanner.atEnd else { return nil }
        micros -= offset * microsPerSecond
        return Date(timeIntervalSinceReferenceDate: Double(micros - referenceOffsetMicros) / 1_000_000)
    }

    /// Reads ASCII digits and signs from the text form.
    private struct Scanner {
        let bytes: [UInt8]
        var position = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { position == bytes.count }

        mutating func skip(_ character: Unicode.Scalar) -> Bool {
            guard position < bytes.count, bytes[position] == UInt8(character.value) else { return false }
            position += 1
            return true
        }

        mutating func number(digits: Int) -> Int64? { number(minDigits: digits, maxDigits: digits) }

        mutating func number(minDigits: Int, maxDigits: Int) -> Int64? {
            var value: Int64 = 0
            var count = 0
            while count < maxDigits, position < bytes.count, let digit = Self.digit(bytes[position]) {
                value = value * 10 + digit
                count += 1
                position += 1
            }
            return count >= minDigits ? value : nil
        }

        /// Fractional seconds as microseconds; digits beyond the sixth are dropped.
        mutating func fraction() -> Int64? {
            var value: Int64 = 0
            var count = 0
            while position < bytes.count, let digit = Self.digit(bytes[position]) {
                if count < 6 { value = value * 10 + digit }
                count += 1
                position += 1
            }
            guard count > 0 else { return nil }
            for _ in count..<max(count, 6) { value *= 10 }
            return value
        }

        /// `Z`, `±HH`, `±HH:MM`, `±HHMM`, `±HH:MM:SS`; nothing means UTC.
        mutating func offsetSeconds() -> Int64? {
            if atEnd || skip("Z") { return 0 }
            let sign: Int64
            if skip("+") { sign = 1 } else if skip("-") { sign = -1 } else { return nil }
            guard let hours = number(digits: 2) else { return nil }
            var seconds = hours * 3600
            for unit: Int64 in [60, 1] {
                let colon = skip(":")
                guard let value = number(digits: 2) else {
                    if colon { return nil }
                    break
                }
                seconds += value * unit
            }
            return sign * seconds
        }

        private static func digit(_ byte: UInt8) -> Int64? {
            byte >= 48 && byte <= 57 ? Int64(byte - 48) : nil
        }
    }
}
