import Foundation

/// Appends accepted messages as JSON lines to a file. Callers serialize `append` (the message log's lock).
final class RecordFile: @unchecked Sendable {
    let path: String
    private let handle: FileHandle
    private let log: FakeLog

    init(path: String, log: FakeLog) throws(UsageError) {
        self.path = path
        self.log = log
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil) else { throw UsageError("cannot create record file \(path)") }
        }
        guard let handle = FileHandle(forWritingAtPath: path) else { throw UsageError("cannot open record file \(path) for writing") }
        handle.seekToEndOfFile()
        self.handle = handle
    }

    deinit { try? handle.close() }

    /// Appends one line; a failure is logged, and the message stays in memory.
    func append(_ summary: RecordedMessage.Summary, body: Data) {
        do {
            try handle.write(contentsOf: RecordedMessage.recordLine(summary, body: body))
        } catch {
            log.error("cannot append to the record file", ["path": path, "seq": String(summary.seq), "error": "\(error)"])
        }
    }
}
