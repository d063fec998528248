import Foundation
import HTTPServer

extension HTTPResponse {
    /// A JSON response from a `JSONSerialization` tree (dictionaries, arrays, strings, numbers, booleans, `NSNull`):
    /// the fake's ad hoc answers. Production code answers with `Encodable` values (`json(_:status:encoder:)`).
    static func json(object: Any, status: Int = 200) -> HTTPResponse {
        guard JSONSerialization.isValidJSONObject(object),
            let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else {
            return .text("cannot encode response\n", status: 500)
        }
        return jsonBody(data, status: status)
    }
}
