import Glibc
import HTTPTypes

/// The header list of the last request, reused while requests carry the same header fields, byte for byte: a push
/// sender's requests differ only in their bodies until its access token changes. Each transfer keeps the list it
/// was given alive until it ends (libcurl only reads it). Touched only on the transfer thread.
struct HeaderListCache {
    private var last: (headers: HTTPHeaders, hasBody: Bool, list: CurlHeaderList)?

    mutating func list(for request: HTTPRequest) throws -> CurlHeaderList {
        let hasBody = !request.body.isEmpty
        if let last, last.hasBody == hasBody, Self.sameBytes(last.headers, request.headers) { return last.list }
        let list = try EasyConfigurator.headerList(for: request)
        last = (request.headers, hasBody, list)
        return list
    }

    /// Equal names and values in the same order, compared as UTF-8 bytes (`String ==` also equates canonically
    /// equivalent text, whose bytes on the wire differ).
    static func sameBytes(_ a: HTTPHeaders, _ b: HTTPHeaders) -> Bool {
        a.count == b.count && zip(a.fields, b.fields).allSatisfy { sameBytes($0.name, $1.name) && sameBytes($0.value, $1.value) }
    }

    private static func sameBytes(_ a: String, _ b: String) -> Bool {
        var a = a
        var b = b
        return a.withUTF8 { x in b.withUTF8 { y in x.count == y.count && (x.isEmpty || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0) } }
    }
}
