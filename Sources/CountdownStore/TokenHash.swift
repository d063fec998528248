/// `countdown_start_ledger.token_hash`: the lowercase hex MD5 of `<fcm>:<push-to-start>` (a missing token as
/// empty), the same value as PostgreSQL's `md5(coalesce(fcm, '') || ':' || coalesce(pts, ''))` over UTF-8 text,
/// which the reconciler still computes in SQL over `devices` and every existing row holds. Computed by the
/// worker, a settle or an upsert sends 32 characters per row instead of both tokens, and PostgreSQL hashes
/// nothing. Not a security measure: it only tells a replaced token from the one a push was refused for.
public enum TokenHash {
    public static func of(fcm: String?, pts: String?) -> String {
        var text = (fcm ?? "") + ":" + (pts ?? "")
        return text.withUTF8 { md5Hex(UnsafeRawBufferPointer($0)) }
    }

    /// Lowercase hex of `message`'s MD5.
    static func md5Hex(_ message: UnsafeRawBufferPointer) -> String {
        var hex = [UInt8]()
        hex.reserveCapacity(32)
        for byte in MD5.digest(message) {
            hex.append(hexDigit(byte >> 4))
            hex.append(hexDigit(byte & 0x0F))
        }
        return String(decoding: hex, as: UTF8.self)
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}
