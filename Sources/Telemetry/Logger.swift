import Foundation

/// A structured logger: cheap to copy and to call (a record below `level` costs one comparison; message and
/// fields are autoclosures), safe from any thread or task.
///
/// Never pass secrets: callers log tokens only through `Redact.token(_:)` and leave keys, passwords and
/// authorization headers out. As a safety net, fields whose keys look secret are replaced by "[REDACTED]" and
/// string fields whose keys contain "token" are shortened to their last 8 characters.
public struct Logger: Sendable {
    public let level: LogLevel
    public let format: LogFormat
    /// Fields added to every record, e.g. `component`.
    public let fields: [String: LogValue]
    private let sink: any LogSink
    private let clock: @Sendable () -> Date

    public init(
        level: LogLevel = .info, format: LogFormat = .json, sink: any LogSink = StandardErrorLogSink.shared,
        fields: [String: LogValue] = [:], clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.level = level
        self.format = format
        self.sink = sink
        self.fields = fields
        self.clock = clock
    }

    /// A child logger whose records also carry `fields` (overriding the parent's on equal keys).
    public func with(_ fields: [String: LogValue]) -> Logger {
        Logger(level: level, format: format, sink: sink, fields: self.fields.merging(fields) { _, new in new }, clock: clock)
    }

    /// Whether a record at `level` would be written.
    public func isEnabled(_ level: LogLevel) -> Bool { level >= self.level }

    /// Writes one record when `level` is enabled; call fields override the logger's own.
    public func log(_ level: LogLevel, _ message: @autoclosure () -> String, _ fields: @autoclosure () -> [String: LogValue] = [:]) {
        guard isEnabled(level) else { return }
        let callFields = fields()
        let all = callFields.isEmpty ? self.fields : self.fields.merging(callFields) { _, new in new }
        sink.write(LogLineFormatter.line(format, time: clock(), level: level, message: message(), fields: all))
    }

    public func debug(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> [String: LogValue] = [:]) {
        log(.debug, message(), fields())
    }

    public func info(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> [String: LogValue] = [:]) {
        log(.info, message(), fields())
    }

    public func warn(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> [String: LogValue] = [:]) {
        log(.warn, message(), fields())
    }

    public func error(_ message: @autoclosure () -> String, _ fields: @autoclosure () -> [String: LogValue] = [:]) {
        log(.error, message(), fields())
    }
}
