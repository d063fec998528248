/// How important a log record is; records below the logger's level are dropped before they are built.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case debug
    case info
    case warn
    case error

    /// The name used in log lines and in `LOG_LEVEL`.
    public var name: String {
        switch self {
        case .debug: "debug"
        case .info: "info"
        case .warn: "warn"
        case .error: "error"
        }
    }

    /// Parses `debug`, `info`, `warn` (or `warning`), `error`, in any case.
    public init?(name: String) {
        switch name.lowercased() {
        case "debug": self = .debug
        case "info": self = .info
        case "warn", "warning": self = .warn
        case "error": self = .error
        default: return nil
        }
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}
