@testable import CountdownAPI
import Foundation
import Testing

/// The byte scanner agrees with the regular expressions it replaced, on the known models and on many
/// generated look-alikes.
@Suite struct DeviceModelPatternTests {
    /// The previous implementation, kept as the reference.
    enum Reference {
        static let brands = [
            "iphone", "ipad", "ipod", "applewatch", "appletv", "macbook", "pixel", "nexus", "galaxy", "samsung", "redmi",
            "xiaomi", "oneplus", "huawei", "honor", "oppo", "vivo", "realme", "poco", "moto", "motorola", "nokia", "sony",
            "xperia", "simulator", "emulator", "sdk_gphone", "android", "ios",
        ]
        nonisolated(unsafe) static let appleMachine = /^(iphone|ipad|ipod|watch|appletv|audioaccessory|realitydevice|mac[a-z]*|imac[a-z]*)\d+,\d+$|^(arm64|x86_64|i386)$/
        nonisolated(unsafe) static let modelWords = /^[a-z0-9]{0,6}([ _-][a-z0-9]{1,6})*$/
        nonisolated(unsafe) static let modelNumber = /^(sm-[a-z]\d{3,4}[a-z0-9]{0,4}|[a-z]{3}-[a-z]{1,2}\d{2}[a-z]?)$/

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

    static let known = [
        "iphone-15-pro-max", "iPhone15,2", "SM-G991B", "sm-a5360", "SM-S9180ZZZ", "iPhone 15 Pro", "Pixel 8 Pro", "galaxy-s23-ultra",
        "VOG-L29", "ELS-N29", "iPad13,4", "x86_64", "arm64", "ios", "android", "MacBookPro18,1", "iMac21,1", "Watch6,1", "iphoneplus",
        "iphonepro max", "samsung_s23", "pixel",
    ]
    static let stable = [
        UUID().uuidString, "a1b2c3d4e5f60718", "ios-550e8400-e29b-41d4-a716-446655440000", "dXNlcl9pbnN0YWxsXzE0Mzk:install",
        "iphone-1234567", "sm-g99", "sm-g991b12345", "vog-l2", "vog-lll29", "mac15", "iphone15,", "pixel 1234567", "ios.device.1", "iphone-", "iphone--15",
    ]

    @Test func knownModelsAndStableIDs() {
        for model in Self.known { #expect(DeviceModelPattern.matches(model) && Reference.matches(model), "\(model)") }
        for id in Self.stable { #expect(!DeviceModelPattern.matches(id) && !Reference.matches(id), "\(id)") }
    }

    @Test func agreesWithTheReferenceOnGeneratedLookAlikes() {
        var generator = SystemRandomNumberGenerator()
        let pieces = ["iphone", "ipad", "mac", "imac", "watch", "sm-", "vog-", "pixel", "pro", "plus", "ios", "galaxy", "a", "b", "z",
                      "1", "9", "15", "991", "1234", ",", "-", "_", " ", ".", ":", "x86_64", "arm64", "els-", "l", "nx", "É"]
        var disagreements: [String] = []
        for _ in 0..<20_000 {
            let count = Int.random(in: 1...6, using: &generator)
            var id = (0..<count).map { _ in pieces.randomElement(using: &generator)! }.joined()
            if Bool.random(using: &generator) { id = id.uppercased() }
            if DeviceModelPattern.matches(id) != Reference.matches(id) { disagreements.append(id) }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(20))")
    }

    @Test func jsonMediaTypes() {
        for type in ["application/json", "Application/JSON; charset=utf-8", "  application/json  ;x", "application/problem+json", "application/vnd.api+json"] {
            #expect(JSONBody.isJSON(type), "\(type)")
        }
        for type in ["text/json", "application/jsonx", "application/xml", "", "json", "application/+jso", "text/plain+json"] {
            #expect(!JSONBody.isJSON(type), "\(type)")
        }
    }
}
