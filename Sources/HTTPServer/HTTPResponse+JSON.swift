import Foundation

extension HTTPResponse {
    /// A JSON response from an `Encodable` value (keys sorted, so bodies are stable).
    public static func json<T: Encodable>(_ value: T, status: Int = 200, encoder: JSONEncoder = HTTPResponse.jsonEncoder) -> HTTPResponse {
        do {
            return jsonBody(try encoder.encode(value), status: status)
        } catch {
            return .text("cannot encode response: \(error)\n", status: 500)
        }
    }

    /// A response whose body is already JSON.
    public static func jsonBody(_ data: Data, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json; charset=utf-8"], body: data)
    }

    /// The encoder `json(_:)` uses by default: sorted keys, no escaped slashes.
    public static var jsonEncoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
