/// Push tokens appear in logs only as their last 8 characters.
public enum PushToken {
    public static func redacted(_ token: String) -> String {
        token.count <= 8 ? "…" + token : "…" + token.suffix(8)
    }
}
