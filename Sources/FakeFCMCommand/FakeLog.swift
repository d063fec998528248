import Foundation

/// Structured logs: one JSON object per line on stderr (`ts`, `level`, `msg`, fields).
struct FakeLog: Sendable {
    enum Level: Int, Sendable, Comparable {
        case debug, info, warn, error
        static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
        var name: String { ["debug", "info", "warn", "error"][rawValue] }
    }

    let minimum: Level

    /// `LOG_LEVEL` = debug, info, warn or error.
    static func parseLevel(_ text: String?) throws(UsageError) -> Level {
        switch text?.lowercased() ?? "info" {
        case "debug": .debug
        case "info", "": .info
        case "warn", "warning": .warn
        case "error": .error
        default: throw UsageError("LOG_LEVEL must be debug, info, warn or error, got \"\(text ?? "")\"")
        }
    }

    /// Fields are only built when debug logging is on (this runs per request).
    func debug(_ message: String, _ fields: @autoclosure () -> [String: String] = [:]) {
        if minimum == .debug { write(.debug, message, fields()) }
    }
    func info(_ message: String, _ fields: [String: String] = [:]) { write(.info, message, fields) }
    func warn(_ message: String, _ fields: [String: String] = [:]) { write(.warn, message, fields) }
    func error(_ message: String, _ fields: [String: String] = [:]) { write(.error, message, fields) }

    /// A push token as it may appear in logs: its last 8 characters.
    static func redact(_ token: String) -> String { "…" + String(token.suffix(8)) }

    private func write(_ level: Level, _ message: String, _ fields: [String: String]) {
        guard level >= minimum else { return }
        var object = fields
        object["ts"] = Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(Date())
        object["level"] = level.name
        object["msg"] = message
        object["service"] = "countdown-fake-fcm"
        guard var line = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        line.append(UInt8(ascii: "\n"))
        FileHandle.standardError.write(line)
    }
}
