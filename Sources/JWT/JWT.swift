import Foundation
import JSON

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
    /// - Throws: `JWTError` `.malformedToken` for anything but three base64url parts with JSON object header and claims
    ///   (a key repeated in either is refused: readers disagree on which value counts), `.invalidClaims` when a
    ///   registered claim has the wrong type or a time claim lies outside `timeClaimRange`.
    public static func parse(_ token: String) throws -> JWT {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw JWTError(.malformedToken, "expected 3 dot-separated parts, found \(parts.count)")
        }
        guard let headerJSON = Base64URL.decode(parts[0]) else { throw JWTError(.malformedToken, "the header is not base64url") }
        guard let claimsJSON = Base64URL.decode(parts[1]) else { throw JWTError(.malformedToken, "the claims are not base64url") }
        guard let signature = Base64URL.decode(parts[2]) else { throw JWTError(.malformedToken, "the signature is not base64url") }
        guard isJSONObject(headerJSON) else {
            throw JWTError(.malformedToken, "the header is not a JSON object (or repeats a key)")
        }
        let header: JWTHeader
        do {
            header = try JSONDecoder().decode(JWTHeader.self, from: Data(headerJSON))
        } catch {
            throw JWTError(.malformedToken, "the header is not a JSON object with a string \"alg\"")
        }
        guard isJSONObject(claimsJSON) else { throw JWTError(.malformedToken, "the claims are not a JSON object (or repeat a key)") }
        let claims: JWTClaims
        do {
            claims = try JSONDecoder().decode(JWTClaims.self, from: Data(claimsJSON))
        } catch {
            throw JWTError(.invalidClaims, "a registered claim has the wrong type: \(error)")
        }
        for (name, value) in [("exp", claims.exp), ("nbf", claims.nbf), ("iat", claims.iat)] {
            if let value, !timeClaimRange.contains(value) {
                throw JWTError(.invalidClaims, "\(name) is not a time between 1970 and 9999")
            }
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

    /// Epoch seconds a time claim (`exp`, `nbf`, `iat`) may hold: 1970-01-01 to 9999-12-31. Anything else (a
    /// negative, huge or non-finite number) is refused while parsing, so no later arithmetic or conversion of it
    /// can overflow.
    public static let timeClaimRange: ClosedRange<Double> = 0...253_402_300_799

    /// A JSON object with no key repeated (the strict parser of the JSON module refuses repeats).
    private static func isJSONObject(_ bytes: [UInt8]) -> Bool {
        if case .object? = JSONValue.parse(bytes) { return true }
        return false
    }
}
