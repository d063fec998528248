import COpenSSL
import Foundation

/// An RSA or EC key loaded from PEM; owns the OpenSSL `EVP_PKEY` and frees it on `deinit`.
///
/// Immutable after loading, so one key may sign or verify from many threads at once.
public final class AsymmetricKey: @unchecked Sendable {
    /// What kind of key this is.
    public enum Kind: Sendable, Equatable {
        case rsa(bits: Int)
        /// An elliptic-curve key on the named curve (`prime256v1` is P-256).
        case ec(curve: String)
        case other(id: Int32)
    }

    let handle: OpaquePointer
    public let kind: Kind
    /// Whether the key holds private material (and so can sign).
    public let isPrivate: Bool
    /// Where the key came from, for error messages.
    public let source: String

    private init(handle: OpaquePointer, isPrivate: Bool, source: String) {
        self.handle = handle
        self.isPrivate = isPrivate
        self.source = source
        kind = Self.kind(of: handle)
    }

    deinit { EVP_PKEY_free(handle) }

    /// Loads a private key from PEM: PKCS#8 (`BEGIN PRIVATE KEY`, as Apple .p8 files and Google service
    /// accounts hold), PKCS#1 (`BEGIN RSA PRIVATE KEY`) or SEC1 (`BEGIN EC PRIVATE KEY`). Encrypted keys are refused.
    /// - Parameter source: names the key in errors (a file path, or e.g. "service account private_key").
    public static func privateKey(pem: String, source: String = "inline PEM") throws -> AsymmetricKey {
        // The passphrase callback supplies none, so an encrypted key fails instead of prompting on the terminal.
        try load(pem: pem, source: source, isPrivate: true, problem: "not a readable unencrypted PEM private key") {
            PEM_read_bio_PrivateKey($0, nil, { _, _, _, _ in -1 }, nil)
        }
    }

    /// Loads a private key from a PEM file (e.g. an Apple `AuthKey_XXXX.p8`).
    public static func privateKey(file path: String) throws -> AsymmetricKey {
        try privateKey(pem: String(decoding: try JWTError.contents(of: path, code: .invalidKey), as: UTF8.self), source: path)
    }

    /// Loads a public key from PEM (`BEGIN PUBLIC KEY`, SubjectPublicKeyInfo).
    public static func publicKey(pem: String, source: String = "inline PEM") throws -> AsymmetricKey {
        try load(pem: pem, source: source, isPrivate: false, problem: "not a readable PEM public key (BEGIN PUBLIC KEY)") {
            PEM_read_bio_PUBKEY($0, nil, { _, _, _, _ in -1 }, nil)
        }
    }

    /// Loads a public key from a PEM file.
    public static func publicKey(file path: String) throws -> AsymmetricKey {
        try publicKey(pem: String(decoding: try JWTError.contents(of: path, code: .invalidKey), as: UTF8.self), source: path)
    }

    /// Loads a public key from DER SubjectPublicKeyInfo bytes.
    public static func publicKey(der: [UInt8], source: String) throws -> AsymmetricKey {
        let key = try der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return try OpenSSL.check(d2i_PUBKEY(nil, &cursor, buffer.count), .invalidKey, "not a DER public key", source: source)
        }
        return AsymmetricKey(handle: key, isPrivate: false, source: source)
    }

    /// The public half of this key as a key of its own (itself when already public).
    public func publicKey() throws -> AsymmetricKey {
        guard isPrivate else { return self }
        return try Self.publicKey(der: try publicKeyDER(), source: source)
    }

    private func publicKeyDER() throws -> [UInt8] {
        let length = i2d_PUBKEY(handle, nil)
        guard length > 0 else { throw OpenSSL.failure(.invalidKey, "i2d_PUBKEY failed", source: source) }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_PUBKEY(handle, &cursor)
        }
        guard written == length else { throw OpenSSL.failure(.invalidKey, "i2d_PUBKEY failed", source: source) }
        return der
    }

    private static func kind(of key: OpaquePointer) -> Kind {
        let id = EVP_PKEY_get_base_id(key)
        switch id {
        case EVP_PKEY_RSA:
            return .rsa(bits: Int(EVP_PKEY_get_bits(key)))
        case EVP_PKEY_EC:
            var name = [CChar](repeating: 0, count: 80)
            var length = 0
            guard EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 else {
                OpenSSL.drainErrors()
                return .ec(curve: "unknown")
            }
            return .ec(curve: String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self))
        default:
            return .other(id: id)
        }
    }

    private static func load(
        pem: String, source: String, isPrivate: Bool, problem: String, read: (OpaquePointer) -> OpaquePointer?
    ) throws -> AsymmetricKey {
        try requirePEM(pem, source: source)
        OpenSSL.drainErrors()
        let key = try Array(pem.utf8).withUnsafeBytes { bytes in
            // The BIO reads the bytes in place, so it is freed before they are.
            let bio = try OpenSSL.check(BIO_new_mem_buf(bytes.baseAddress, Int32(bytes.count)), .cryptoFailure, "BIO_new_mem_buf failed",
                                        source: source)
            defer { BIO_free(bio) }
            return try OpenSSL.check(read(bio), .invalidKey, problem, source: source)
        }
        return AsymmetricKey(handle: key, isPrivate: isPrivate, source: source)
    }

    private static func requirePEM(_ pem: String, source: String) throws {
        if pem.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            throw JWTError(.invalidKey, "the key is empty", source: source)
        }
        if !pem.contains("-----BEGIN ") {
            throw JWTError(.invalidKey, "no PEM block (expected a '-----BEGIN ...-----' line)", source: source)
        }
        if pem.contains("ENCRYPTED") {
            throw JWTError(.invalidKey, "the key is encrypted; an unencrypted key is required", source: source)
        }
    }
}
