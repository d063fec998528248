/// Collapse identifiers of a stream's notifications (`apns-collapse-id`, `android.collapse_key`): a prefix and a
/// short hash of the stream id, so a later message of the same kind replaces an earlier one on the device. Short
/// and fixed in length whatever the stream id (APNs allows 64 bytes), and the same on every worker.
public enum CollapseID {
    /// `reminder-` and the stream id's short hash (25 bytes).
    public static func reminder(stream streamId: String) -> String { "reminder-" + shortHash(streamId) }

    /// 16 lowercase hex digits of the 64-bit FNV-1a hash of the id's UTF-8 bytes: stable across processes and
    /// releases (unlike Swift's `Hasher`), not a security measure.
    public static func shortHash(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
