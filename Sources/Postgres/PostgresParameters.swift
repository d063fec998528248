import CLibPQ
import Foundation

/// Statement parameters in the shape `PQexecParams` takes: declared types and NUL-terminated text values
/// (a NULL pointer for SQL NULL).
struct PostgresParameters {
    private let types: [Oid]
    private let texts: [String?]

    init(_ parameters: [(any PostgresEncodable)?], what: @autoclosure () -> String) throws {
        var types: [Oid] = []
        var texts: [String?] = []
        for (index, parameter) in parameters.enumerated() {
            guard let parameter else {
                types.append(PostgresType.unknown.rawValue)
                texts.append(nil)
                continue
            }
            var text = parameter.postgresText
            let hasNUL = text.withUTF8 { bytes in bytes.baseAddress.map { memchr($0, 0, bytes.count) != nil } ?? false }
            guard !hasNUL else {
                throw PostgresError(
                    code: .invalidParameter, what: what(),
                    message: "parameter $\(index + 1) contains a NUL character, which PostgreSQL text cannot hold"
                )
            }
            types.append(type(of: parameter).postgresType.rawValue)
            texts.append(text)
        }
        self.types = types
        self.texts = texts
    }

    var count: Int { texts.count }

    /// The declared types, part of a prepared statement's identity.
    var typeOIDs: [Oid] { types }

    /// Calls `body` with the declared types and C strings; the strings live until `body` returns.
    func withCValues<R>(_ body: ([Oid], [UnsafePointer<CChar>?]) -> R) -> R {
        let copies = texts.map { $0.map { strdup($0) } ?? nil }
        defer { copies.forEach { free($0) } }
        return body(types, copies.map { UnsafePointer($0) })
    }
}
