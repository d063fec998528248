/// Recognises device ids that are really device models (`iphone-15-pro-max`, `iPhone15,2`, `SM-G991B`,
/// `Pixel 8 Pro`, `VOG-L29`): such an id is shared by every phone of that model, so devices would overwrite
/// each other's tokens. Runs on every registration, so it scans bytes rather than using regular expressions
/// (Swift `Regex` cost the API about 4 % of its CPU here).
enum DeviceModelPattern {
    /// Marketing names and platform words a model-like id starts with.
    private static let brands: [[UInt8]] = [
        "iphone", "ipad", "ipod", "applewatch", "appletv", "macbook", "pixel", "nexus", "galaxy", "samsung", "redmi",
        "xiaomi", "oneplus", "huawei", "honor", "oppo", "vivo", "realme", "poco", "moto", "motorola", "nokia", "sony",
        "xperia", "simulator", "emulator", "sdk_gphone", "android", "ios",
    ].map { Array($0.utf8) }
    /// Apple machine identifiers start with one of these, then `<digits>,<digits>`: `iPhone15,2`, `Watch6,1`.
    private static let applePrefixes: [[UInt8]] = ["iphone", "ipad", "ipod", "watch", "appletv", "audioaccessory", "realitydevice"]
        .map { Array($0.utf8) }
    private static let architectures: [[UInt8]] = ["arm64", "x86_64", "i386"].map { Array($0.utf8) }

    static func matches(_ value: String) -> Bool {
        guard value.utf8.count <= 32, value.utf8.allSatisfy({ $0 < 0x80 }) else { return false }
        let id = value.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }[...]
        if isAppleMachine(id) || isModelNumber(id) { return true }
        for brand in brands where id.starts(with: brand) {
            let rest = id.dropFirst(brand.count)
            guard let next = rest.first else { return true }
            if next == 0x20 || next == 0x2D || next == 0x5F || isDigit(next) || rest.starts(with: "pro".utf8) || rest.starts(with: "plus".utf8) {
                if isModelWords(rest) { return true }
            }
        }
        return false
    }

    /// `iphone15,2`, `macbookpro18,1`, `imac21,1`, or an architecture (`arm64`, `x86_64`, `i386`).
    private static func isAppleMachine(_ id: ArraySlice<UInt8>) -> Bool {
        if architectures.contains(where: { id.elementsEqual($0) }) { return true }
        for prefix in applePrefixes where id.starts(with: prefix) {
            if isVersionPair(id.dropFirst(prefix.count)) { return true }
        }
        for prefix in ["mac", "imac"] where id.starts(with: prefix.utf8) {
            if isVersionPair(id.dropFirst(prefix.utf8.count).drop(while: isLetter)) { return true }
        }
        return false
    }

    /// `<digits>,<digits>` and nothing else.
    private static func isVersionPair(_ text: ArraySlice<UInt8>) -> Bool {
        guard let comma = text.firstIndex(of: 0x2C) else { return false }
        let major = text[..<comma], minor = text[(comma + 1)...]
        return !major.isEmpty && !minor.isEmpty && major.allSatisfy(isDigit) && minor.allSatisfy(isDigit)
    }

    /// Samsung `sm-g991b` (a letter, 3–4 digits, up to 4 more letters or digits) and Huawei/Honor `vog-l29`,
    /// `els-n29` (three letters, a dash, 1–2 letters, 2 digits, an optional letter).
    private static func isModelNumber(_ id: ArraySlice<UInt8>) -> Bool {
        if id.starts(with: "sm-".utf8), let letter = id.dropFirst(3).first, isLetter(letter) {
            let tail = id.dropFirst(4)
            let digits = tail.prefix(while: isDigit).count
            if (3...8).contains(tail.count), tail.allSatisfy(isAlphanumeric), digits >= 3, tail.count - min(digits, 4) <= 4 { return true }
        }
        guard id.count >= 7, id.prefix(3).allSatisfy(isLetter), id.dropFirst(3).first == 0x2D else { return false }
        let tail = id.dropFirst(4)
        for letters in 1...2 {
            let rest = tail.dropFirst(letters)
            guard tail.prefix(letters).count == letters, tail.prefix(letters).allSatisfy(isLetter), rest.count >= 2,
                  rest.prefix(2).allSatisfy(isDigit) else { continue }
            let suffix = rest.dropFirst(2)
            if suffix.isEmpty || (suffix.count == 1 && suffix.allSatisfy(isLetter)) { return true }
        }
        return false
    }

    /// Short model words after a brand: up to 6 letters or digits, then any number of ` `/`-`/`_` and 1–6 more
    /// (`-15-pro-max`, ` 8 pro`, `_s23`; a UUID's segments are longer).
    private static func isModelWords(_ text: ArraySlice<UInt8>) -> Bool {
        var length = 0
        var first = true
        for byte in text {
            if byte == 0x20 || byte == 0x2D || byte == 0x5F {
                if !first && length == 0 { return false }
                first = false
                length = 0
            } else if isAlphanumeric(byte) {
                length += 1
                if length > 6 { return false }
            } else {
                return false
            }
        }
        return first || length > 0
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
    private static func isLetter(_ byte: UInt8) -> Bool { byte >= 0x61 && byte <= 0x7A }
    private static func isAlphanumeric(_ byte: UInt8) -> Bool { isDigit(byte) || isLetter(byte) }
}
