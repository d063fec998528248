import COpenSSL

/// Owner of an `EVP_MD_CTX` for one SHA-256 sign or verify operation.
final class DigestContext {
    let handle: OpaquePointer

    init() throws {
        handle = try OpenSSL.check(EVP_MD_CTX_new(), .cryptoFailure, "EVP_MD_CTX_new failed")
    }

    deinit { EVP_MD_CTX_free(handle) }

    /// Signs `message` with `key` (RSA PKCS#1 v1.5 or ECDSA DER, by key type) over SHA-256.
    func sign(_ message: [UInt8], with key: OpaquePointer) throws -> [UInt8] {
        try OpenSSL.check(EVP_DigestSignInit(handle, nil, EVP_sha256(), nil, key), .cryptoFailure, "EVP_DigestSignInit failed")
        var length = 0
        try OpenSSL.check(EVP_DigestSign(handle, nil, &length, message, message.count), .cryptoFailure, "EVP_DigestSign (size) failed")
        var signature = [UInt8](repeating: 0, count: length)
        try OpenSSL.check(EVP_DigestSign(handle, &signature, &length, message, message.count), .cryptoFailure, "EVP_DigestSign failed")
        return Array(signature.prefix(length))
    }

    /// Whether `signature` (RSA or ECDSA DER) matches `message` under `key` over SHA-256.
    func verify(_ signature: [UInt8], of message: [UInt8], with key: OpaquePointer) throws -> Bool {
        try OpenSSL.check(EVP_DigestVerifyInit(handle, nil, EVP_sha256(), nil, key), .cryptoFailure, "EVP_DigestVerifyInit failed")
        let result = EVP_DigestVerify(handle, signature, signature.count, message, message.count)
        // 0 is a mismatch and a negative value a malformed signature: both are just "does not verify".
        OpenSSL.drainErrors()
        return result == 1
    }
}
