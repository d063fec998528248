import COpenSSL

/// Owner of an `ECDSA_SIG`, converting between OpenSSL's DER form and JOSE's fixed 64-byte `r || s`.
final class ECDSASignature {
    private let handle: OpaquePointer
    static let componentSize = 32

    /// Parses a DER `ECDSA-Sig-Value` as OpenSSL's signing produces it.
    init(der: [UInt8]) throws {
        handle = try der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return try OpenSSL.check(d2i_ECDSA_SIG(nil, &cursor, buffer.count), .cryptoFailure, "d2i_ECDSA_SIG failed")
        }
    }

    /// Builds the signature from a JOSE 64-byte `r || s`.
    init(raw: [UInt8]) throws {
        guard raw.count == 2 * Self.componentSize else {
            throw JWTError(.badSignature, "an ES256 signature is \(2 * Self.componentSize) bytes, got \(raw.count)")
        }
        let signature = try OpenSSL.check(ECDSA_SIG_new(), .cryptoFailure, "ECDSA_SIG_new failed")
        let r = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32(Self.componentSize), nil) }
        let s = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + Self.componentSize, Int32(Self.componentSize), nil) }
        guard let r, let s, ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            ECDSA_SIG_free(signature)
            throw OpenSSL.failure(.cryptoFailure, "ECDSA_SIG_set0 failed")
        }
        handle = signature
    }

    deinit { ECDSA_SIG_free(handle) }

    /// `r || s`, each left-padded to 32 bytes.
    func raw() throws -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 2 * Self.componentSize)
        let r = ECDSA_SIG_get0_r(handle)
        let s = ECDSA_SIG_get0_s(handle)
        let size = Int32(Self.componentSize)
        let written = output.withUnsafeMutableBufferPointer { buffer in
            (BN_bn2binpad(r, buffer.baseAddress, size), BN_bn2binpad(s, buffer.baseAddress! + Self.componentSize, size))
        }
        guard written.0 == size, written.1 == size else {
            throw OpenSSL.failure(.cryptoFailure, "ECDSA signature component does not fit 32 bytes")
        }
        return output
    }

    /// The DER encoding OpenSSL verifies.
    func der() throws -> [UInt8] {
        let length = i2d_ECDSA_SIG(handle, nil)
        guard length > 0 else { throw OpenSSL.failure(.cryptoFailure, "i2d_ECDSA_SIG failed") }
        var output = [UInt8](repeating: 0, count: Int(length))
        let written = output.withUnsafeMutableBufferPointer { buffer in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return i2d_ECDSA_SIG(handle, &cursor)
        }
        guard written == length else { throw OpenSSL.failure(.cryptoFailure, "i2d_ECDSA_SIG failed") }
        return output
    }
}
