import Foundation
import JSON

/// Reads the fake FCM's record file (`--record`, one JSON line per accepted message) from where it last stopped,
/// independently of the scenario's `PushTally`.
final class RecordFollower {
    let path: String
    private var offset: UInt64 = 0
    /// The bytes after the last newline read (a line still being written).
    private var partial: [UInt8] = []

    init(path: String) {
        self.path = path
    }

    /// The lines written since the last call; none while the file does not exist yet. A line that is not JSON is
    /// skipped (the fake writes whole lines).
    func new() throws -> [JSONValue] {
        guard let handle = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? handle.close() }
        try handle.seek(toOffset: offset)
        let chunk = try handle.readToEnd() ?? Data()
        offset += UInt64(chunk.count)
        var lines = (partial + chunk).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        partial = Array(lines.removeLast())
        return lines.compactMap { $0.isEmpty ? nil : JSONValue.parse($0) }
    }
}
