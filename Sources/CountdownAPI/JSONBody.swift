import Foundation
import HTTPServer
import JSON

/// A request body read as one JSON object, with typed field access. Unknown fields are ignored; `null` and the
/// empty string count as absent.
struct JSONBody {
    /// Largest body the API reads (the server itself refuses much larger ones before they are read).
    static let maxBytes = 16 * 1024

    private let object: [String: JSONValue]

    /// Checks size, media type and syntax, in that order.
    /// - Throws: `APIError` 413, 415 or 400.
    init(_ request: HTTPRequest, maxBytes: Int = JSONBody.maxBytes) throws(APIError) {
        guard request.body.count <= maxBytes else {
            throw APIError(.payloadTooLarge, "the body has \(request.body.count) bytes; at most \(maxBytes) are accepted")
        }
        guard let contentType = request.headers["Content-Type"], Self.isJSON(contentType) else {
            throw APIError(.unsupportedMediaType, "the body must be JSON with Content-Type: application/json")
        }
        guard let parsed = try? JSONDecoder().decode(JSONValue.self, from: request.body) else {
            throw APIError(.malformedJSON, "the body is not valid JSON")
        }
        guard case .object(let object) = parsed else {
            throw APIError(.malformedJSON, "the body must be a JSON object")
        }
        self.object = object
    }

    /// The string field `name`; nil when absent, null or empty.
    /// - Throws: `APIError` 400 `.wrongType` when it is not a string.
    func string(_ name: String) throws(APIError) -> String? {
        switch object[name] {
        case nil, .null?:
            return nil
        case .string(let text)?:
            return text.isEmpty ? nil : text
        default:
            throw APIError(.wrongType, "\(name) must be a string", field: name)
        }
    }

    /// `value`, or a 422 saying `field` is required.
    static func require(_ value: String?, _ field: String) throws(APIError) -> String {
        guard let value else { throw APIError.invalid(field, "is required") }
        return value
    }

    /// `application/json` or `application/<anything>+json`, parameters (charset) allowed.
    static func isJSON(_ contentType: String) -> Bool {
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
        var media = contentType.utf8.prefix { $0 != 0x3B }.drop(while: isSpace)  // up to ';', trimmed
        while let last = media.last, isSpace(last) { media = media.dropLast() }
        let lowered = media.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }
        return lowered.elementsEqual("application/json".utf8)
            || (lowered.starts(with: "application/".utf8) && lowered.suffix(5).elementsEqual("+json".utf8))
    }
}
