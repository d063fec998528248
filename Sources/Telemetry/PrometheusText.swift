/// Pieces of the Prometheus text exposition format 0.0.4.
enum PrometheusText {
    /// `# HELP` text: backslash and newline escaped.
    static func escapeHelp(_ text: String) -> String { escape(text, quotes: false) }

    /// A label value: backslash, double quote and newline escaped.
    static func escapeLabelValue(_ text: String) -> String { escape(text, quotes: true) }

    private static func escape(_ text: String, quotes: Bool) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\"" where quotes: out += "\\\""
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `{a="x",b="y"}`, or "" without labels; `extra` (e.g. `le`) goes last.
    static func labelSet(_ names: [String], _ values: [String], extra: (String, String)? = nil) -> String {
        var pairs = zip(names, values).map { "\($0)=\"\(escapeLabelValue($1))\"" }
        if let extra { pairs.append("\(extra.0)=\"\(escapeLabelValue(extra.1))\"") }
        return pairs.isEmpty ? "" : "{" + pairs.joined(separator: ",") + "}"
    }

    /// A sample value: integers without a fraction, `+Inf`, `-Inf`, `NaN`, else the shortest exact decimal.
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 9_007_199_254_740_992 { return String(Int64(value)) }
        return "\(value)"
    }

    /// `[a-zA-Z_:][a-zA-Z0-9_:]*`
    static func isValidMetricName(_ name: String) -> Bool {
        isIdentifier(name, extra: UInt8(ascii: ":"))
    }

    /// `[a-zA-Z_][a-zA-Z0-9_]*`, not starting with `__` (reserved).
    static func isValidLabelName(_ name: String) -> Bool {
        isIdentifier(name, extra: nil) && !name.hasPrefix("__")
    }

    private static func isIdentifier(_ name: String, extra: UInt8?) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first else { return false }
        func isLetter(_ byte: UInt8) -> Bool {
            (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x5F || byte == extra
        }
        return isLetter(first) && bytes.allSatisfy { isLetter($0) || (0x30...0x39).contains($0) }
    }
}
