import Foundation
import Synchronization

/// Appends accepted messages as JSON lines to a file.
///
/// Without a flush interval each line is written before the message is answered. With one (`--record-flush-ms`,
/// for load tests, where one `write` per message cost a tenth of the fake's CPU) lines are gathered and written
/// by a flusher thread every interval, or at once when 64 KiB wait; `flush()` writes what waits (at stop).
final class RecordFile: @unchecked Sendable {
    let path: String
    private let handle: FileHandle
    private let log: FakeLog
    private let gathering: Bool
    /// Lines not yet written; the lock also orders writes.
    private let pending = Mutex<[UInt8]>([])
    private static let gatherLimit = 64 << 10

    /// `flushMilliseconds` 0 writes each line as it is appended; more gathers lines and writes them that often.
    init(path: String, log: FakeLog, flushMilliseconds: Int = 0) throws(UsageError) {
        self.path = path
        self.log = log
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil) else { throw UsageError("cannot create record file \(path)") }
        }
        guard let handle = FileHandle(forWritingAtPath: path) else { throw UsageError("cannot open record file \(path) for writing") }
        handle.seekToEndOfFile()
        self.handle = handle
        gathering = flushMilliseconds > 0
        if gathering {
            let microseconds = UInt32(clamping: flushMilliseconds * 1000)
            // The record file lives as long as the process.
            Thread.detachNewThread { [self] in
                while true {
                    usleep(microseconds)
                    flush()
                }
            }
        }
    }

    deinit { try? handle.close() }

    /// Appends one record line, newline included (or gathers it); a failed write is logged, and the message stays in
    /// memory.
    func append(line: [UInt8], seq: Int) {
        pending.withLock { pending in
            guard gathering else {
                write(line, seq: seq)
                return
            }
            pending.append(contentsOf: line)
            if pending.count >= Self.gatherLimit {
                write(pending, seq: seq)
                pending.removeAll(keepingCapacity: true)
            }
        }
    }

    /// Writes every gathered line.
    func flush() {
        pending.withLock { pending in
            guard !pending.isEmpty else { return }
            write(pending, seq: nil)
            pending.removeAll(keepingCapacity: true)
        }
    }

    private func write(_ bytes: [UInt8], seq: Int?) {
        do {
            try handle.write(contentsOf: bytes)
        } catch {
            log.error("cannot append to the record file", ["path": path, "seq": seq.map { String($0) } ?? "", "error": "\(error)"])
        }
    }
}
