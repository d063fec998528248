import Foundation
import JWT

/// CSRF tokens for the console's forms: `<issued epoch seconds>.<hex HMAC-SHA-256(key, user and issued)>`, bound to
/// the user (another user's token is refused) and valid for `lifetime`. The key is `CONSOLE_CSRF_KEY`, or random per
/// process when unset (then a token works only on the replica that issued it).
public struct CSRFTokens: Sendable {
    public static let lifetime: TimeInterval = 12 * 3600

    private let key: [UInt8]
    private let now: @Sendable () -> Date

    public init(key: [UInt8], now: @escaping @Sendable () -> Date = { Date() }) {
        self.key = key
        self.now = now
    }

    /// 32 random bytes.
    public static func randomKey() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// A fresh token for `user`.
    public func issue(for user: String) -> String {
        let issued = Int(now().timeIntervalSince1970)
        return "\(issued).\(Self.hex(mac(user: user, issued: issued)))"
    }

    /// Whether `token` was issued by this key for `user` and has not expired.
    public func isValid(_ token: String?, for user: String) -> Bool {
        guard let token, token.utf8.count <= 200 else { return false }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let issued = Int(parts[0]) else { return false }
        let age = now().timeIntervalSince1970 - TimeInterval(issued)
        guard age >= -60, age <= Self.lifetime else { return false }
        return HMACSHA256.equalInConstantTime(Array(Self.hex(mac(user: user, issued: issued)).utf8), Array(parts[1].utf8))
    }

    private func mac(user: String, issued: Int) -> [UInt8] {
        // The user's length first, so no (user, time) pair reads as another.
        let message = Array("countdown-console csrf v1|\(user.utf8.count)|\(user)|\(issued)".utf8)
        return (try? HMACSHA256.mac(key: key, message: message)) ?? []
    }

    private static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
}
