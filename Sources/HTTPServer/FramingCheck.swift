import Foundation

/// The body framing of a request as its header fields declare it, checked before the body is read.
///
/// A request whose length two readers could see differently is refused: a proxy in front that trusts one
/// header while this server trusts the other would let a second request hide in the first one's body
/// (request smuggling). libmicrohttpd 0.9.75 hands every header field to the application, repeated ones
/// included, so these are decided here; what it consumes before (bare LF line ends, folded header lines) is
/// in docs/operations.md ("Security").
struct FramingCheck {
    /// Every `Content-Length` value, in order.
    private(set) var contentLengths: [String] = []
    /// Whether any `Transfer-Encoding` field was sent.
    private(set) var hasTransferEncoding = false
    /// The first field name that is not a token (`Transfer-Encoding : chunked` has a space before its colon).
    private(set) var malformedName: String?

    init(fields: [(name: String, value: String)]) {
        for field in fields { add(name: field.name, value: field.value) }
    }

    private mutating func add(name: String, value: String) {
        if malformedName == nil, name.isEmpty || !name.utf8.allSatisfy(Self.isTokenByte) { malformedName = name }
        switch name.lowercased() {
        case "content-length": contentLengths.append(value)
        case "transfer-encoding": hasTransferEncoding = true
        default: break
        }
    }

    /// Why the request is refused (answered `400`, connection closed), or nil when its framing is unambiguous.
    var problem: String? {
        // A name with a space before its colon is one a proxy may read as another name (RFC 9112 5.1: refuse it).
        if let malformedName {
            return "the header field name \"\(malformedName.prefix(64))\" is not a token (no space or separator may precede the colon)"
        }
        if hasTransferEncoding && !contentLengths.isEmpty {
            return "the request has both Content-Length and Transfer-Encoding; send one"
        }
        if contentLengths.count > 1 { return "the request has \(contentLengths.count) Content-Length fields; send one" }
        if let length = contentLengths.first {
            let trimmed = length.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty, trimmed.utf8.count <= 18, trimmed.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
                return "Content-Length must be one decimal number"
            }
        }
        return nil
    }

    /// `tchar` of RFC 9110 5.6.2: letters, digits and ``!#$%&'*+-.^_`|~``.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
