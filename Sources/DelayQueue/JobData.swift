/// The stored form of a job: its kind, a NUL byte, then its payload.
enum JobData {
    static func encode(kind: String, payload: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(kind.utf8.count + 1 + payload.count)
        bytes.append(contentsOf: kind.utf8)
        bytes.append(0)
        bytes.append(contentsOf: payload)
        return bytes
    }

    /// `nil` when the bytes are not in this form or the kind is not UTF-8.
    static func decode(_ bytes: [UInt8]) -> (kind: String, payload: [UInt8])? {
        guard let separator = bytes.firstIndex(of: 0), separator > 0,
              let kind = String(validating: bytes[..<separator], as: UTF8.self) else { return nil }
        return (kind, Array(bytes[(separator + 1)...]))
    }
}
