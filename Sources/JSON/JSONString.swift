/// JSON string escaping on UTF-8 bytes, the one escaper of the package: `"` and `\` and the C0 control
/// characters are escaped (`\b \t \n \f \r` short, the others `\u00xx`), every other byte (including all of
/// multi-byte UTF-8, whose bytes are all ≥ 0x80) is copied as is.
public enum JSONString {
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Appends `text` as a quoted JSON string.
    public static func appendQuoted(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        appendEscaped(text, quotes: true, to: &out)
        out.append(UInt8(ascii: "\""))
    }

    /// `text` as a JSON string literal, quotes included.
    public static func quoted(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 2)
        appendQuoted(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `text` escaped as inside a JSON string, without the quotes; `quotes: false` leaves `"` as is, for text
    /// that is not written between quotes (a log line's message) but must stay on one line.
    public static func escaped(_ text: String, quotes: Bool = true) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        appendEscaped(text, quotes: quotes, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// The number of bytes `text` takes inside a JSON string (without the quotes).
    public static func escapedCount<Bytes: Sequence<UInt8>>(utf8 bytes: Bytes) -> Int {
        if let count = bytes.withContiguousStorageIfAvailable({ escapedCount(contiguous: $0) }) { return count }
        return bytes.reduce(0) { $0 + escapedCount($1) }
    }

    /// `escapedCount(utf8:)` of a `String`, read in place (a native string's bytes are contiguous).
    public static func escapedCount(_ text: String) -> Int {
        var text = text
        return text.withUTF8 { escapedCount(contiguous: $0) }
    }

    private static func escapedCount(contiguous bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var count = bytes.count
        for byte in bytes where byte < 0x20 || byte == 0x22 || byte == 0x5C {
            count += escapedCount(byte) - 1
        }
        return count
    }

    private static func escapedCount(_ byte: UInt8) -> Int {
        switch byte {
        case 0x22, 0x5C, 0x08, 0x09, 0x0A, 0x0C, 0x0D: 2
        case 0x00..<0x20: 6
        default: 1
        }
    }

    /// Copies the runs of bytes that need no escape whole (tokens and most texts are one run).
    private static func appendEscaped(_ text: String, quotes: Bool, to out: inout [UInt8]) {
        var text = text
        text.withUTF8 { bytes in
            var run = 0
            for index in bytes.indices {
                let byte = bytes[index]
                guard byte < 0x20 || byte == 0x5C || (quotes && byte == 0x22) else { continue }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<index]))
                appendEscaped(byte, quotes: quotes, to: &out)
                run = index + 1
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run...]))
        }
    }

    private static func appendEscaped(_ byte: UInt8, quotes: Bool, to out: inout [UInt8]) {
        switch byte {
        case 0x22 where quotes: out.append(contentsOf: [0x5C, 0x22])
        case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
        case 0x08: out.append(contentsOf: [0x5C, UInt8(ascii: "b")])
        case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
        case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
        case 0x0C: out.append(contentsOf: [0x5C, UInt8(ascii: "f")])
        case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
        case 0x00..<0x20:
            out.append(contentsOf: Array("\\u00".utf8))
            out.append(hexDigits[Int(byte >> 4)])
            out.append(hexDigits[Int(byte & 0x0F)])
        default: out.append(byte)
        }
    }
}
