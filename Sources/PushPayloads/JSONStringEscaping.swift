/// JSON string escaping on UTF-8 bytes: `"` and `\` and the C0 control characters are escaped, every other
/// byte (including all of multi-byte UTF-8, whose bytes are all ≥ 0x80) is copied as is.
enum JSONStringEscaping {
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Appends `text` as a quoted JSON string.
    static func appendQuoted(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 { appendEscaped(byte, to: &out) }
        out.append(UInt8(ascii: "\""))
    }

    /// The number of bytes `text` takes inside a JSON string (without the quotes).
    static func escapedCount<Bytes: Sequence<UInt8>>(utf8 bytes: Bytes) -> Int {
        bytes.reduce(0) { $0 + escapedCount($1) }
    }

    private static func escapedCount(_ byte: UInt8) -> Int {
        switch byte {
        case 0x22, 0x5C, 0x08, 0x09, 0x0A, 0x0C, 0x0D: 2
        case 0x00..<0x20: 6
        default: 1
        }
    }

    private static func appendEscaped(_ byte: UInt8, to out: inout [UInt8]) {
        switch byte {
        case 0x22: out.append(contentsOf: [0x5C, 0x22])
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
