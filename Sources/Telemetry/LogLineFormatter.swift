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
        var out: [UInt8] = []
        out.reserveCapacity(192 + message.utf8.count)
        out.append(contentsOf: #"{"ts":""#.utf8)
        RFC3339.appendMilliseconds(time, to: &out)
        out.append(contentsOf: #"","level":""#.utf8)
        out.append(contentsOf: level.name.utf8)
        out.append(contentsOf: #"","msg":"#.utf8)
        JSONString.appendQuoted(message, to: &out)
        if let component { appendJSONMember(componentKey, component, to: &out) }
        for (key, value) in fields { appendJSONMember(key, value, to: &out) }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
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

    private static func appendJSONMember(_ key: String, _ value: LogValue, to out: inout [UInt8]) {
        out.append(UInt8(ascii: ","))
        JSONString.appendQuoted(key, to: &out)
        out.append(UInt8(ascii: ":"))
        switch value {
        case .string(let text): JSONString.appendQuoted(text, to: &out)
        case .int(let number): out.append(contentsOf: String(number).utf8)
        case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
        case .double(let number):
            if number.isFinite { out.append(contentsOf: "\(number)".utf8) } else { JSONString.appendQuoted("\(number)", to: &out) }
        }
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
