import Foundation
import JSON

/// Verification keys from a JSON Web Key Set (RFC 7517): `{"keys": [{"kty", "kid", "alg"?, "use"?, ...}]}`.
///
/// Accepted: RSA keys (`n`, `e`) for RS256, P-256 EC keys (`crv`, `x`, `y`) for ES256, and `oct` keys (`k`,
/// at least 32 bytes) for HS256. Every key needs a `kid` (tokens choose their key by it). Keys marked for
/// another use (`use` other than `sig`) or another algorithm are skipped; anything malformed is an error
/// naming the key, so a bad rotation is noticed instead of silently dropping a key.
public enum JSONWebKeySet {
    /// Parses `data` (the file's bytes); `source` names the file in errors.
    public static func keys(from data: Data, source: String) throws -> [VerificationKey] {
        guard let entries = try? JSONDecoder().decode(Document.self, from: data).keys else {
            throw JWTError(.invalidKey, "not a JWKS (a JSON object with a \"keys\" array of objects)", source: source)
        }
        var keys: [VerificationKey] = []
        var seen = Set<String>()
        for (index, entry) in entries.enumerated() {
            guard let kid = entry["kid"]?.string, !kid.isEmpty else {
                throw JWTError(.invalidKey, "key \(index) has no kid", source: source)
            }
            guard seen.insert(kid).inserted else { throw JWTError(.invalidKey, "kid \"\(kid)\" appears twice", source: source) }
            if let use = entry["use"]?.string, use != "sig" { continue }
            if let key = try key(entry, kid: kid, source: "\(source) kid \(kid)") { keys.append(key) }
        }
        return keys
    }

    /// The set as JSON: `{"keys": [{...}, ...]}`, each key's members read one by one.
    private struct Document: Decodable {
        let keys: [[String: JSONValue]]
    }

    private static func key(_ entry: [String: JSONValue], kid: String, source: String) throws -> VerificationKey? {
        func bytes(_ name: String) throws -> [UInt8] {
            guard let text = entry[name]?.string, let decoded = Base64URL.decode(text), !decoded.isEmpty else {
                throw JWTError(.invalidKey, "\"\(name)\" is missing or not base64url", source: source)
            }
            return decoded
        }
        let alg = entry["alg"]?.string
        switch entry["kty"]?.string {
        case "RSA":
            guard alg == nil || alg == "RS256" else { return nil }
            let der = DER.sequence(DER.sequence(DER.rsaEncryption + DER.null)
                + DER.bitString(DER.sequence(DER.integer(try bytes("n")) + DER.integer(try bytes("e")))))
            return try .rs256(try AsymmetricKey.publicKey(der: der, source: source), keyID: kid)
        case "EC":
            guard alg == nil || alg == "ES256" else { return nil }
            guard entry["crv"]?.string == "P-256" else { throw JWTError(.invalidKey, "only crv P-256 is supported", source: source) }
            let x = try bytes("x"), y = try bytes("y")
            guard x.count == 32, y.count == 32 else { throw JWTError(.invalidKey, "x and y must be 32 bytes", source: source) }
            let der = DER.sequence(DER.sequence(DER.ecPublicKey + DER.prime256v1) + DER.bitString([0x04] + x + y))
            return try .es256(try AsymmetricKey.publicKey(der: der, source: source), keyID: kid)
        case "oct":
            guard alg == nil || alg == "HS256" else { return nil }
            let secret = try bytes("k")
            guard secret.count >= 32 else { throw JWTError(.invalidKey, "an HS256 key needs at least 32 bytes", source: source) }
            return try .hs256(secret: secret, keyID: kid)
        default:
            throw JWTError(.invalidKey, "kty \"\(entry["kty"]?.string ?? "")\" is not RSA, EC or oct", source: source)
        }
    }

    /// The few DER encodings a SubjectPublicKeyInfo needs.
    private enum DER {
        static let rsaEncryption: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01]
        static let ecPublicKey: [UInt8] = [0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]
        static let prime256v1: [UInt8] = [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]
        static let null: [UInt8] = [0x05, 0x00]

        static func sequence(_ content: [UInt8]) -> [UInt8] { [0x30] + length(content.count) + content }
        static func bitString(_ content: [UInt8]) -> [UInt8] { [0x03] + length(content.count + 1) + [0x00] + content }

        /// A non-negative INTEGER from big-endian magnitude bytes.
        static func integer(_ magnitude: [UInt8]) -> [UInt8] {
            var value = Array(magnitude.drop { $0 == 0 })
            if value.isEmpty { value = [0] }
            if value[0] & 0x80 != 0 { value.insert(0, at: 0) }
            return [0x02] + length(value.count) + value
        }

        static func length(_ count: Int) -> [UInt8] {
            if count < 0x80 { return [UInt8(count)] }
            var bytes: [UInt8] = []
            var rest = count
            while rest > 0 {
                bytes.insert(UInt8(rest & 0xFF), at: 0)
                rest >>= 8
            }
            return [0x80 | UInt8(bytes.count)] + bytes
        }
    }
}
