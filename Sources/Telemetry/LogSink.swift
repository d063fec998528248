/// Where finished log lines go. `write` is called with one line (no trailing newline) and must not interleave
/// concurrent lines.
public protocol LogSink: Sendable {
    func write(_ line: String)
}
