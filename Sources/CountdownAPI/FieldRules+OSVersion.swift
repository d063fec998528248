extension FieldRules {
    /// The iOS version a device's app reports (`osVersion`, e.g. `18`, `18.2` or `17.5.1`: one to three dot-separated
    /// numbers, the first 1–99), with its major version: iOS 18 or later starts on the stream's broadcast channel.
    static func osVersion(_ value: String, field: String = "osVersion") throws(APIError) -> (version: String, major: Int) {
        let parts = value.split(separator: ".", omittingEmptySubsequences: false)
        guard value.utf8.count <= 16, (1...3).contains(parts.count),
              parts.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 4 && $0.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } }),
              let major = Int(parts[0]), (1...99).contains(major) else {
            throw APIError.invalid(field, "must be an iOS version such as 18, 18.2 or 17.5.1")
        }
        return (value, major)
    }
}
