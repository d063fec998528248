import Foundation
import JSON

/// Renders one log record as a single line (newlines inside values are escaped in both formats).
enum LogLineFormatter {
    /// Keys the line itself uses; a field with one of these names is written as `_<name>`.
    static let reservedKeys: Set<String> = ["ts", "level", "msg"]
    static let componentKey = "component"

    static func line(_ format: LogFormat, time: Date, level: LogLevel, message: String, fields: [String: LogValue]) -> String {
        var component: LogValue?
        var others: [(String, LogValue)] = []
        others.reserveCapacity(fields.count)
        for (key, value) in fields {
            let safe = Redact.field(key, value)
            if key == componentKey {
                component = safe
            } else {
                others.append((reservedKeys.contains(key) ? "_" + key : key, safe))
            }
        }
        others.sort { $0.0 < $1.0 }
        switch format {
        case .json: return json(time: time, level: level, message: message, component: component, fields: others)
        case .text: return text(time: time, level: level, message: message, component: component, fields: others)
        }
    }

    private static func json(
        time: Date, level: LogLevel, message: String, component: LogValue?, fields: [(String, LogValue)]
    ) -> String {
        var out = "{\"ts\":\"\(RFC3339.milliseconds(time))\",\"level\":\"\(level.name)\",\"msg\":"
        appendJSONString(message, to: &out)
        if let component { appendJSONMember(componentKey, component, to: &out) }
        for (key, value) in fields { appendJSONMember(key, value, to: &out) }
        out.append("}")
        return out
    }

    private static func text(
        time: Date, level: LogLevel, message: String, component: LogValue?, fields: [(String, LogValue)]
    ) -> String {
        let levelName = level.name
        var out = RFC3339.milliseconds(time) + " " + levelName + String(repeating: " ", count: 5 - levelName.count)
        if let component { out += " [" + plain(component) + "]" }
        out += " " + JSONString.escaped(message, quotes: false)
        for (key, value) in fields {
            out += " " + key + "=" + textValue(value)
        }
        return out
    }

    private static func appendJSONMember(_ key: String, _ value: LogValue, to out: inout String) {
        out.append(",")
        appendJSONString(key, to: &out)
        out.append(":")
        switch value {
        case .string(let text): appendJSONString(text, to: &out)
        case .int(let number): out += String(number)
        case .bool(let flag): out += flag ? "true" : "false"
        case .double(let number): if number.isFinite { out += "\(number)" } else { appendJSONString("\(number)", to: &out) }
        }
    }

    private static func appendJSONString(_ text: String, to out: inout String) {
        out += JSONString.quoted(text)
    }

    private static func plain(_ value: LogValue) -> String {
        switch value {
        case .string(let text): JSONString.escaped(text, quotes: false)
        case .int(let number): String(number)
        case .bool(let flag): flag ? "true" : "false"
        case .double(let number): "\(number)"
        }
    }

    /// A text-format value: bare when it is a simple word, else quoted with escapes.
    private static func textValue(_ value: LogValue) -> String {
        guard case .string(let text) = value else { return plain(value) }
        let simple = !text.isEmpty && text.unicodeScalars.allSatisfy {
            $0.value > 0x20 && $0 != "\"" && $0 != "=" && $0 != "\\"
        }
        if simple { return text }
        return JSONString.quoted(text)
    }
}
