/// Recognises device ids that are really device models (`iphone-15-pro-max`, `iPhone15,2`, `SM-G991B`,
/// `Pixel 8 Pro`, `VOG-L29`): such an id is shared by every phone of that model, so devices would overwrite
/// each other's tokens.
enum DeviceModelPattern {
    /// Marketing names and platform words a model-like id starts with.
    private static let brands = [
        "iphone", "ipad", "ipod", "applewatch", "appletv", "macbook", "pixel", "nexus", "galaxy", "samsung", "redmi",
        "xiaomi", "oneplus", "huawei", "honor", "oppo", "vivo", "realme", "poco", "moto", "motorola", "nokia", "sony",
        "xperia", "simulator", "emulator", "sdk_gphone", "android", "ios",
    ]

    /// Apple machine identifiers: `iPhone15,2`, `iPad13,1`, `Watch6,1`, `AppleTV14,1`, `arm64`, `x86_64`.
    nonisolated(unsafe) private static let appleMachine = /^(iphone|ipad|ipod|watch|appletv|audioaccessory|realitydevice|mac[a-z]*|imac[a-z]*)\d+,\d+$|^(arm64|x86_64|i386)$/
    /// After a brand, only short model words: `-15-pro-max`, ` 8 pro`, `_s23` (a UUID's segments are longer).
    nonisolated(unsafe) private static let modelWords = /^[a-z0-9]{0,6}([ _-][a-z0-9]{1,6})*$/
    /// Vendor model numbers: Samsung `SM-G991B`, Huawei/Honor `VOG-L29`, `ELS-NX9`.
    nonisolated(unsafe) private static let modelNumber = /^(sm-[a-z]\d{3,4}[a-z0-9]{0,4}|[a-z]{3}-[a-z]{1,2}\d{2}[a-z]?)$/

    static func matches(_ value: String) -> Bool {
        let lowered = value.lowercased()
        guard lowered.count <= 32 else { return false }
        if lowered.wholeMatch(of: appleMachine) != nil || lowered.wholeMatch(of: modelNumber) != nil { return true }
        for brand in brands where lowered.hasPrefix(brand) {
            let rest = lowered.dropFirst(brand.count)
            guard let next = rest.first else { return true }
            if next == " " || next == "-" || next == "_" || next.isNumber || rest.hasPrefix("pro") || rest.hasPrefix("plus") {
                if String(rest).wholeMatch(of: modelWords) != nil { return true }
            }
        }
        return false
    }
}
