/// The languages the payload texts exist in.
public enum PayloadLanguage: String, Sendable, Equatable, CaseIterable {
    case tr
    case en

    /// The language of a locale identifier such as "tr", "tr-TR", "en_US" or "EN-gb"; nil when unsupported.
    public init?(localeIdentifier: String) {
        let code = localeIdentifier.split(whereSeparator: { $0 == "-" || $0 == "_" || $0 == "." || $0 == "@" })
            .first.map { $0.lowercased() } ?? ""
        guard let language = PayloadLanguage(rawValue: code) else { return nil }
        self = language
    }

    /// The target's language: the device's locale over the user's, the first one that is supported, else
    /// `fallback` (Turkish by default).
    public static func resolve(deviceLocale: String?, userLocale: String?, fallback: PayloadLanguage = .tr) -> PayloadLanguage {
        for candidate in [deviceLocale, userLocale] {
            if let candidate, let language = PayloadLanguage(localeIdentifier: candidate) { return language }
        }
        return fallback
    }
}
