/// Push tokens appear in logs only as their last 8 characters, and only when longer than 16 (`Redact.token`).
public enum PushToken {
    public static func redacted(_ token: String) -> String { Redact.token(token) }
}
