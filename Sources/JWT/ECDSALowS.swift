/// The low-S rule for ES256 signatures (P-256): for every valid `(r, s)` the pair `(r, n - s)` is valid too, so a
/// verifier that accepts both lets anyone turn one signed token into a second, different string with the same
/// claims. Signatures are made with `s ≤ n / 2` and any other one is refused.
enum ECDSALowS {
    /// The order `n` of P-256, big-endian.
    static let order: [UInt8] = [
        0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51,
    ]
    /// `n / 2` rounded down, big-endian.
    static let halfOrder: [UInt8] = [
        0x7F, 0xFF, 0xFF, 0xFF, 0x80, 0x00, 0x00, 0x00, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xDE, 0x73, 0x7D, 0x56, 0xD3, 0x8B, 0xCF, 0x42, 0x79, 0xDC, 0xE5, 0x61, 0x7E, 0x31, 0x92, 0xA8,
    ]

    /// Whether the `s` half of a 64-byte `r || s` signature is at most `n / 2`.
    static func isLow(_ signature: [UInt8]) -> Bool {
        guard signature.count == 64 else { return false }
        return !halfOrder.lexicographicallyPrecedes(signature[32...])
    }

    /// The same signature with `s` replaced by `n - s` when it is high (both verify; only the low one is accepted).
    static func normalized(_ signature: [UInt8]) -> [UInt8] {
        guard signature.count == 64, !isLow(signature) else { return signature }
        return twin(signature)
    }

    /// `r || (n - s)`: the other signature of the same message and key (`s` in 1..<n).
    static func twin(_ signature: [UInt8]) -> [UInt8] {
        var difference = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for index in stride(from: 31, through: 0, by: -1) {
            var value = Int(order[index]) - Int(signature[32 + index]) - borrow
            borrow = value < 0 ? 1 : 0
            if value < 0 { value += 256 }
            difference[index] = UInt8(value)
        }
        return Array(signature[..<32]) + difference
    }
}
