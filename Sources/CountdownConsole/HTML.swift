/// A fragment of HTML. Interpolated strings are escaped; only other `HTML` values go in as they are, so every value
/// that reaches a page is escaped unless it was built as markup by the console itself.
public struct HTML: Sendable, Equatable, ExpressibleByStringInterpolation, CustomStringConvertible {
    public private(set) var text: String

    public init(stringLiteral value: String) { text = value }
    public init(stringInterpolation: Interpolation) { text = stringInterpolation.text }
    init(raw: String) { text = raw }

    public var description: String { text }

    public struct Interpolation: StringInterpolationProtocol {
        var text = ""
        public init(literalCapacity: Int, interpolationCount: Int) { text.reserveCapacity(literalCapacity * 2) }
        public mutating func appendLiteral(_ literal: String) { text += literal }
        public mutating func appendInterpolation(_ value: String) { text += HTML.escape(value) }
        public mutating func appendInterpolation(_ value: String?) { text += HTML.escape(value ?? "—") }
        public mutating func appendInterpolation(_ value: Int) { text += String(value) }
        public mutating func appendInterpolation(_ value: HTML) { text += value.text }
        public mutating func appendInterpolation(_ values: [HTML]) { for value in values { text += value.text } }
    }

    /// `&`, `<`, `>`, `"` and `'` as character references: safe in text and in quoted attribute values.
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    /// Joins fragments.
    public static func join(_ parts: [HTML], separator: HTML = "") -> HTML {
        HTML(raw: parts.map(\.text).joined(separator: separator.text))
    }
}
