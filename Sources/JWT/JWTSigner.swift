import Foundation

/// Signs compact JWS tokens with one key and algorithm. Safe to share across tasks.
public struct JWTSigner: Sendable {
    public let algorithm: JWTAlgorithm
    /// Written as the header's `kid` when set (APNs needs it).
    public let keyID: String?
    private let material: KeyMaterial

    /// RS256 with an RSA private key (≥ 2048 bits).
    public static func rs256(privateKey: AsymmetricKey, keyID: String? = nil) throws -> JWTSigner {
        JWTSigner(algorithm: .rs256, keyID: keyID, material: try .bind(privateKey, to: .rs256, needsPrivate: true))
    }

    /// ES256 with a P-256 private key, such as an Apple `.p8`.
    public static func es256(privateKey: AsymmetricKey, keyID: String? = nil) throws -> JWTSigner {
        JWTSigner(algorithm: .es256, keyID: keyID, material: try .bind(privateKey, to: .es256, needsPrivate: true))
    }

    /// HS256 with a shared secret of at least 32 bytes.
    public static func hs256(secret: [UInt8], keyID: String? = nil) throws -> JWTSigner {
        JWTSigner(algorithm: .hs256, keyID: keyID, material: try .bind(secret: secret))
    }

    /// Signs `claims` (encoded as JSON with sorted keys) under the header `{"alg", "kid"?, "typ":"JWT"}`.
    public func sign<Claims: Encodable>(_ claims: Claims) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            let header = try encoder.encode(JWTHeader(alg: algorithm.rawValue, kid: keyID))
            return try sign(headerJSON: Array(header), claimsJSON: Array(try encoder.encode(claims)))
        } catch let error as JWTError {
            throw error
        } catch {
            throw JWTError(.invalidClaims, "the claims cannot be encoded as JSON: \(error)")
        }
    }

    /// Signs exact header and claims bytes (the caller is responsible for the header naming this algorithm).
    public func sign(headerJSON: [UInt8], claimsJSON: [UInt8]) throws -> String {
        let input = Base64URL.encode(headerJSON) + "." + Base64URL.encode(claimsJSON)
        let signature = try material.sign(Array(input.utf8), algorithm: algorithm)
        return input + "." + Base64URL.encode(signature)
    }
}
