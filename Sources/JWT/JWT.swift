import Foundation

/// A compact JWS token split into its parts. `parse` checks only the shape; `JWTVerifier` checks the rest.
public struct JWT: Sendable {
    public let header: JWTHeader
    public let claims: JWTClaims
    /// The decoded header and claims JSON, byte for byte as signed.
    public let headerJSON: [UInt8]
    public let claimsJSON: [UInt8]
    public let signature: [UInt8]
    /// `base64url(header) "." base64url(claims)`, the bytes the signature covers.
    public let signingInput: [UInt8]

    /// Splits and decodes `token` without verifying it.
    /// - Throws: `JWTError` `.malformedToken` for anything but three base64url parts with JSON object header and claims,
    ///   `.invalidClaims` when a registered claim has the wrong type.
    public static func parse(_ token: String) throws -> JWT {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw JWTError(.malformedToken, "expected 3 dot-separated parts, found \(parts.count)")
        }
        guard let headerJSON = Base64URL.decode(parts[0]) else { throw JWTError(.malformedToken, "the header is not base64url") }
        guard let claimsJSON = Base64URL.decode(parts[1]) else { throw JWTError(.malformedToken, "the claims are not base64url") }
        guard let signature = Base64URL.decode(parts[2]) else { throw JWTError(.malformedToken, "the signature is not base64url") }
        let header: JWTHeader
        do {
            header = try JSONDecoder().decode(JWTHeader.self, from: Data(headerJSON))
        } catch {
            throw JWTError(.malformedToken, "the header is not a JSON object with a string \"alg\"")
        }
        guard isJSONObject(claimsJSON) else { throw JWTError(.malformedToken, "the claims are not a JSON object") }
        let claims: JWTClaims
        do {
            claims = try JSONDecoder().decode(JWTClaims.self, from: Data(claimsJSON))
        } catch {
            throw JWTError(.invalidClaims, "a registered claim has the wrong type: \(error)")
        }
        return JWT(
            header: header, claims: claims, headerJSON: headerJSON, claimsJSON: claimsJSON, signature: signature,
            signingInput: Array(parts[0].utf8) + [UInt8(ascii: ".")] + Array(parts[1].utf8))
    }

    /// Decodes the claims JSON into the caller's own type.
    public func decodeClaims<Claims: Decodable>(as type: Claims.Type) throws -> Claims {
        do {
            return try JSONDecoder().decode(type, from: Data(claimsJSON))
        } catch {
            throw JWTError(.invalidClaims, "the claims do not match \(type): \(error)")
        }
    }

    private static func isJSONObject(_ bytes: [UInt8]) -> Bool {
        (try? JSONSerialization.jsonObject(with: Data(bytes))) is [String: Any]
    }
}
