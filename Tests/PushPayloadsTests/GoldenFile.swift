import Foundation
import Testing

/// Byte-for-byte comparison with files in `Golden/`. `UPDATE_GOLDEN=1` rewrites the files in the source tree
/// instead (review the diff, then run again without it).
enum GoldenFile {
    static var updating: Bool { ProcessInfo.processInfo.environment["UPDATE_GOLDEN"] == "1" }

    static func check(_ name: String, _ actual: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws {
        if updating {
            let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden/\(name)")
            try Data(actual).write(to: url)
            return
        }
        let url = try #require(Bundle.module.resourceURL?.appendingPathComponent("Golden/\(name)"), sourceLocation: sourceLocation)
        guard let expected = try? Data(contentsOf: url) else {
            Issue.record("missing golden file \(name); run with UPDATE_GOLDEN=1 to create it", sourceLocation: sourceLocation)
            return
        }
        if Array(expected) != actual {
            Issue.record("""
                \(name) differs from the golden file (UPDATE_GOLDEN=1 rewrites it)
                expected: \(String(decoding: expected, as: UTF8.self))
                actual:   \(String(decoding: actual, as: UTF8.self))
                """, sourceLocation: sourceLocation)
        }
    }
}
