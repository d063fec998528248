/// How a log record becomes a line.
public enum LogFormat: String, Sendable, CaseIterable {
    /// One JSON object per line: `ts`, `level`, `msg`, `component`, then the other fields by key.
    case json
    /// `<ts> <level> [<component>] <msg> key=value …`, for people reading a terminal.
    case text
}
