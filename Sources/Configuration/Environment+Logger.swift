import Telemetry

extension Environment {
    /// `LOG_LEVEL` (default info), parsed as the logger parses it; a bad value is a `ConfigError` naming it.
    public func logLevel() throws -> LogLevel {
        try parsed("LOG_LEVEL").level
    }

    /// `LOG_FORMAT` (default json); a bad value is a `ConfigError` naming it.
    public func logFormat() throws -> LogFormat {
        try parsed("LOG_FORMAT").format
    }

    /// A logger configured by only `variable`, so each bad setting is reported on its own.
    private func parsed(_ variable: String) throws -> Logger {
        do {
            return try Logger(environment: [variable: values[variable] ?? ""])
        } catch {
            throw ConfigError(.invalid, variable: error.variable, problem: "\"\(error.value)\" is invalid: expected \(error.expected)")
        }
    }
}
