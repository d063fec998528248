import Foundation

/// The format rules of request fields. Each check returns the value to store (tokens are lowercased) or throws
/// a 422 naming the field.
enum FieldRules {
    static let platforms = ["ios", "android", "web"]
    /// Ids that refer to existing rows (stream ids, device ids in paths and sessions) and ActivityKit's activity
    /// identifiers: a generous charset and length.
    static let idLength = 1...128
    /// A device id being registered: a stable per-install id such as a UUID.
    static let newDeviceIDLength = 16...128
    static let hexTokenLength = 32...512
    static let fcmTokenLength = 32...4096
    static let timezoneMaxLength = 64
    static let localeMaxLength = 35

    static func platform(_ value: String, field: String = "platform") throws(APIError) -> String {
        guard platforms.contains(value) else { throw APIError.invalid(field, "must be one of ios, android, web") }
        return value
    }

    /// An id of an existing row or an activity identifier: letters, digits and `. _ : -`.
    static func identifier(_ value: String, field: String) throws(APIError) -> String {
        guard idLength.contains(value.utf8.count), value.utf8.allSatisfy(isIDByte) else {
            throw APIError.invalid(field, "must be \(idLength.lowerBound) to \(idLength.upperBound) letters, digits, '.', '_', ':' or '-'")
        }
        return value
    }

    /// A device id being registered: stable per install, not a device model, not a placeholder.
    static func newDeviceID(_ value: String, field: String = "deviceId") throws(APIError) -> String {
        if DeviceModelPattern.matches(value) {
            throw APIError.invalid(field, "\"\(value.prefix(40))\" looks like a device model; send a stable per-install id such as a UUID")
        }
        guard newDeviceIDLength.contains(value.utf8.count), value.utf8.allSatisfy(isIDByte) else {
            throw APIError.invalid(
                field,
                "must be a stable per-install id such as a UUID: \(newDeviceIDLength.lowerBound) to \(newDeviceIDLength.upperBound) letters, digits, '.', '_', ':' or '-'")
        }
        let distinct = Set(value.lowercased().utf8.filter { isAlphanumeric($0) })
        guard distinct.count >= 4 else {
            throw APIError.invalid(field, "is a placeholder (such as the all-zero UUID); send a stable per-install id")
        }
        return value
    }

    /// A push-to-start or Live Activity token: hex of whole bytes, stored lowercase.
    static func hexToken(_ value: String, field: String) throws(APIError) -> String {
        guard hexTokenLength.contains(value.utf8.count), value.utf8.count % 2 == 0, value.utf8.allSatisfy(isHexByte) else {
            throw APIError.invalid(
                field, "must be the token's bytes as hex: an even number of \(hexTokenLength.lowerBound) to \(hexTokenLength.upperBound) characters 0-9, a-f")
        }
        return value.lowercased()
    }

    /// An FCM registration token: `A-Z a-z 0-9 _ : -`.
    static func fcmToken(_ value: String, field: String = "token") throws(APIError) -> String {
        guard fcmTokenLength.contains(value.utf8.count), value.utf8.allSatisfy(isFCMByte) else {
            throw APIError.invalid(
                field, "must be an FCM registration token: \(fcmTokenLength.lowerBound) to \(fcmTokenLength.upperBound) letters, digits, '_', ':' or '-'")
        }
        return value
    }

    /// An IANA time zone name such as `Europe/Istanbul`.
    static func timezone(_ value: String, field: String = "timezone") throws(APIError) -> String {
        let parts = value.split(separator: "/", omittingEmptySubsequences: false)
        let wellFormed = value.utf8.count <= timezoneMaxLength && parts.count <= 3
            && parts.allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy(isTimezoneByte) }
            && value.utf8.first.map(isLetter) == true
        guard wellFormed, isKnownTimezone(value) else {
            throw APIError.invalid(field, "must be an IANA time zone name such as Europe/Istanbul")
        }
        return value
    }

    /// A BCP 47 language tag such as `tr`, `en-US` or `en_GB`.
    static func locale(_ value: String, field: String = "locale") throws(APIError) -> String {
        let parts = value.split(separator: "-", omittingEmptySubsequences: false)
            .flatMap { $0.split(separator: "_", omittingEmptySubsequences: false) }
        let language = parts.first ?? ""
        let wellFormed = value.utf8.count <= localeMaxLength
            && (2...3).contains(language.utf8.count) && language.utf8.allSatisfy(isLetter)
            && parts.dropFirst().allSatisfy { (2...8).contains($0.utf8.count) && $0.utf8.allSatisfy(isAlphanumeric) }
        guard wellFormed else { throw APIError.invalid(field, "must be a language tag such as tr, en-US or en_GB") }
        return value
    }

    private static func isKnownTimezone(_ name: String) -> Bool {
        // Without time zone data on the machine, the well-formed name is all that can be checked.
        TimeZone(identifier: name) != nil || knownTimezoneCount == 0
    }

    private static let knownTimezoneCount = TimeZone.knownTimeZoneIdentifiers.count

    private static func isLetter(_ byte: UInt8) -> Bool { (65...90).contains(byte) || (97...122).contains(byte) }
    private static func isDigit(_ byte: UInt8) -> Bool { (48...57).contains(byte) }
    private static func isAlphanumeric(_ byte: UInt8) -> Bool { isLetter(byte) || isDigit(byte) }
    private static func isHexByte(_ byte: UInt8) -> Bool { isDigit(byte) || (65...70).contains(byte) || (97...102).contains(byte) }
    private static func isIDByte(_ byte: UInt8) -> Bool { isAlphanumeric(byte) || byte == 0x2E || byte == 0x5F || byte == 0x3A || byte == 0x2D }
    private static func isFCMByte(_ byte: UInt8) -> Bool { isAlphanumeric(byte) || byte == 0x5F || byte == 0x3A || byte == 0x2D }
    private static func isTimezoneByte(_ byte: UInt8) -> Bool { isAlphanumeric(byte) || byte == 0x5F || byte == 0x2B || byte == 0x2D }
}
