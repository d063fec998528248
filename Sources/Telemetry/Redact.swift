import Synchronization

/// Turns secrets into something safe to log. Callers redact before logging; `Logger` additionally redacts
/// fields whose keys look secret (see `Redact.isSecretKey` and `Redact.isTokenKey`) as a safety net.
public enum Redact {
    /// What a redacted secret is logged as.
    public static let placeholder = "[REDACTED]"

    /// A push or access token as "…" and its last 8 characters, e.g. "…9f3a01bc", when it is longer than 16
    /// characters; a shorter one would reveal half of itself or more that way, so it becomes "…" alone.
    public static func token(_ token: String) -> String {
        token.count <= 16 ? "…" : "…" + token.suffix(8)
    }

    /// Keys never logged in clear: those containing password, passwd, secret, private key, authorization,
    /// api key, credential, cookie or bearer (case, `_`, `-` and `.` ignored).
    public static func isSecretKey(_ key: String) -> Bool { classify(key).secret }

    /// Keys whose string values are tokens (containing "token"): logged as `token(_:)` unless already redacted.
    public static func isTokenKey(_ key: String) -> Bool { classify(key).token }

    /// `value` as it may be logged under `key`.
    static func field(_ key: String, _ value: LogValue) -> LogValue {
        if isSecretKey(key) { return .string(placeholder) }
        if case .string(let text) = value, isTokenKey(key), !text.hasPrefix("…") { return .string(token(text)) }
        return value
    }

    private static let secretWords = ["password", "passwd", "secret", "privatekey", "authorization", "apikey",
                                      "credential", "cookie", "bearer"]

    private struct KeyClass: Sendable {
        let secret: Bool
        let token: Bool
    }

    /// Log field keys are a small fixed set: each is classified once (a bounded cache; every log line asks).
    private static let known = Mutex([String: KeyClass]())

    private static func classify(_ key: String) -> KeyClass {
        if let cached = known.withLock({ $0[key] }) { return cached }
        let normalized = normalize(key)
        let result = KeyClass(secret: secretWords.contains { normalized.contains($0) }, token: normalized.contains("token"))
        known.withLock { cache in
            if cache.count < 4096 { cache[key] = result }
        }
        return result
    }

    private static func normalize(_ key: String) -> String {
        String(key.lowercased().filter { $0 != "_" && $0 != "-" && $0 != "." })
    }
}
