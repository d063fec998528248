import Foundation

/// Everything that can go wrong while loading keys, signing, parsing or verifying a JWT.
public struct JWTError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable {
        /// The token is not three base64url parts, or a part is not the JSON object it should be.
        case malformedToken
        /// The header names an algorithm this module does not implement (including `none`).
        case unsupportedAlgorithm
        /// The algorithm is implemented but the verifier was not given a key for it.
        case algorithmNotAllowed
        /// The signature does not match the signing input.
        case badSignature
        /// A key could not be read, has the wrong type, or is too weak.
        case invalidKey
        /// `exp` has passed (beyond the leeway).
        case expired
        /// `nbf` is still in the future (beyond the leeway).
        case notYetValid
        /// A claim is present but has the wrong type, or a required claim is missing.
        case invalidClaims
        /// `iss` or `aud` is not the one this verifier expects.
        case wrongIssuerOrAudience
        /// `exp` lies further ahead (of now or of `iat`) than the verifier's maximum lifetime.
        case lifetimeTooLong
        /// The header has a `crit` field: it asks for extensions this module does not implement.
        case criticalHeader
        /// The token is longer than the verifier accepts; it was not parsed.
        case tokenTooLarge
        /// OpenSSL failed for a reason other than a bad signature or key.
        case cryptoFailure
        /// A service-account file is missing, unreadable or malformed (`field` names the field at fault).
        case invalidServiceAccount
    }

    public let code: Code
    /// What went wrong, in words (OpenSSL's error text appended when there is any).
    public let problem: String
    /// Where the key or token came from (a file path, "service account private_key", ...), when known.
    public let source: String?
    /// The field of a service-account file at fault, when there is one.
    public let field: String?

    public init(_ code: Code, _ problem: String, source: String? = nil, field: String? = nil) {
        self.code = code
        self.problem = problem
        self.source = source
        self.field = field
    }

    public var description: String {
        var text = code.rawValue
        if let source { text += " (\(source))" }
        if let field { text += ": field \(field)" }
        return text + ": " + problem
    }
}

extension JWTError {
    /// The bytes of the file at `path`, or the error `code` saying whether it is missing or unreadable.
    static func contents(of path: String, code: Code) throws -> Data {
        guard let data = FileManager.default.contents(atPath: path) else {
            let exists = FileManager.default.fileExists(atPath: path)
            throw JWTError(code, exists ? "the file cannot be read" : "no such file", source: path)
        }
        return data
    }
}
