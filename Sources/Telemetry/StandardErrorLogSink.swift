import Foundation
import Synchronization

/// Writes each line plus a newline to standard error in one write, serialized so lines never interleave.
public final class StandardErrorLogSink: LogSink {
    public static let shared = StandardErrorLogSink()

    private let lock = Mutex(())

    public init() {}

    public func write(_ line: String) {
        let data = Data((line + "\n").utf8)
        lock.withLock { _ in try? FileHandle.standardError.write(contentsOf: data) }
    }
}
