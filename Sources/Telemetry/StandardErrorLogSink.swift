import Foundation
import Glibc
import Synchronization

/// Writes each line plus a newline to standard error in one write, serialized so lines never interleave.
public final class StandardErrorLogSink: LogSink {
    public static let shared = StandardErrorLogSink()

    private let lock = Mutex(())

    public init() {}

    public func write(_ line: String) {
        var bytes = [UInt8]()
        bytes.reserveCapacity(line.utf8.count + 1)
        bytes.append(contentsOf: line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        lock.withLock { _ in
            bytes.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = Glibc.write(STDERR_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
                    if written > 0 {
                        offset += written
                    } else if written < 0 && errno == EINTR {
                        continue
                    } else {
                        return  // a closed or full stderr loses the line, as before; logging never throws
                    }
                }
            }
        }
    }
}
