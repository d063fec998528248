import Synchronization
import Telemetry

/// Keeps lines in memory, for tests.
public final class CapturingLogSink: LogSink {
    private let stored = Mutex<[String]>([])

    public init() {}

    public func write(_ line: String) { stored.withLock { $0.append(line) } }

    /// Every line written so far, oldest first.
    public var lines: [String] { stored.withLock { $0 } }

    /// Forgets the lines written so far.
    public func clear() { stored.withLock { $0.removeAll() } }
}
