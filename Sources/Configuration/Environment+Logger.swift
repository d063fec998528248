import Telemetry

extension Environment {
    /// `LOG_LEVEL`: debug, info, warn (or warning), error, in any case; default info. A bad value is a `ConfigError`
    /// naming it.
    public func logLevel() throws -> LogLevel {
        guard let raw = optionalString("LOG_LEVEL") else { return .info }
        guard let level = LogLevel(name: raw) else {
            throw ConfigError(.invalid, variable: "LOG_LEVEL", problem: "\"\(raw)\" is invalid: expected debug, info, warn or error")
        }
        return level
    }

    /// `LOG_FORMAT`: json or text, in any case; default json. A bad value is a `ConfigError` naming it.
    public func logFormat() throws -> LogFormat {
        try choice("LOG_FORMAT", default: .json)
    }
}
