import Foundation
import Telemetry

/// Structured logs: one JSON object per line on stderr (`ts`, `level`, `msg`, fields).
struct FakeLog: Sendable {
    let minimum: LogLevel
    /// The `service` field of every line.
    var service = "countdown-fake-fcm"

    /// `LOG_LEVEL` = debug, info, warn or error (read as the services read it; unset or empty is info).
    static func parseLevel(_ text: String?) throws(UsageError) -> LogLevel {
        guard let text, !text.isEmpty else { return .info }
        guard let level = LogLevel(name: text) else {
            throw UsageError("LOG_LEVEL must be debug, info, warn or error, got \"\(text)\"")
        }
        return level
    }

    /// Fields are only built when debug logging is on (this runs per request).
    func debug(_ message: String, _ fields: @autoclosure () -> [String: String] = [:]) {
        if minimum == .debug { write(.debug, message, fields()) }
    }
    func info(_ message: String, _ fields: [String: String] = [:]) { write(.info, message, fields) }
    func error(_ message: String, _ fields: [String: String] = [:]) { write(.error, message, fields) }

    /// A push token as it may appear in logs: its last 8 characters.
    static func redact(_ token: String) -> String { "…" + String(token.suffix(8)) }

    private func write(_ level: LogLevel, _ message: String, _ fields: [String: String]) {
        guard level >= minimum else { return }
        var object = fields
        object["ts"] = Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(Date())
        object["level"] = level.name
        object["msg"] = message
        object["service"] = service
        guard var line = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        line.append(UInt8(ascii: "\n"))
        FileHandle.standardError.write(line)
    }
}
