import COpenSSL

/// HMAC-SHA-256 and a constant-time comparison, for HS256 (and the console's CSRF tokens).
public enum HMACSHA256 {
    public static func mac(key: [UInt8], message: [UInt8]) throws -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let result = key.withUnsafeBufferPointer { keyBuffer in
            message.withUnsafeBufferPointer { messageBuffer in
                HMAC(EVP_sha256(), keyBuffer.baseAddress, Int32(keyBuffer.count), messageBuffer.baseAddress, messageBuffer.count,
                     &output, &length)
            }
        }
        _ = try OpenSSL.check(result, .cryptoFailure, "HMAC failed")
        return Array(output.prefix(Int(length)))
    }

    public static func equalInConstantTime(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        guard left.count == right.count else { return false }
        return CRYPTO_memcmp(left, right, left.count) == 0
    }
}
