import Foundation

extension Logger {
    /// A logger configured by `LOG_LEVEL` (debug, info, warn, error; default info) and `LOG_FORMAT` (json,
    /// text; default json). Empty values count as unset; anything else throws naming the variable.
    public init(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        sink: any LogSink = StandardErrorLogSink.shared, clock: @escaping @Sendable () -> Date = { Date() }
    ) throws(TelemetryError) {
        var level = LogLevel.info
        if let raw = environment["LOG_LEVEL"], !raw.isEmpty {
            guard let parsed = LogLevel(name: raw) else {
                throw TelemetryError(.invalidEnvironment, variable: "LOG_LEVEL", value: raw, expected: "debug, info, warn or error")
            }
            level = parsed
        }
        var format = LogFormat.json
        if let raw = environment["LOG_FORMAT"], !raw.isEmpty {
            guard let parsed = LogFormat(rawValue: raw.lowercased()) else {
                throw TelemetryError(.invalidEnvironment, variable: "LOG_FORMAT", value: raw, expected: "json or text")
            }
            format = parsed
        }
        self.init(level: level, format: format, sink: sink, clock: clock)
    }
}
