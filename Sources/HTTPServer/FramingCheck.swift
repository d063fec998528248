import CMicroHTTPD
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

    init(connection: OpaquePointer) {
        withUnsafeMutablePointer(to: &self) { pointer in
            _ = MHD_get_connection_values(connection, .HEADER_KIND, { context, _, key, value in
                guard let context, let key else { return .YES }
                let check = context.assumingMemoryBound(to: FramingCheck.self)
                check.pointee.add(name: String(cString: key), value: value.map { String(cString: $0) } ?? "")
                return .YES
            }, pointer)
        }
    }

    init(fields: [(name: String, value: String)]) {
        for field in fields { add(name: field.name, value: field.value) }
    }

    private mutating func add(name: String, value: String) {
        switch name.lowercased() {
        case "content-length": contentLengths.append(value)
        case "transfer-encoding": hasTransferEncoding = true
        default: break
        }
    }

    /// Why the request is refused (answered `400`, connection closed), or nil when its framing is unambiguous.
    var problem: String? {
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
}
