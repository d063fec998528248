import Telemetry

/// Every push token the console shows is masked to its last 8 characters, as in the logs (`Redact.token`), for every
/// role: the console never shows a usable token.
public enum TokenMask {
    public static func mask(_ token: String) -> String { Redact.token(token) }

    public static func mask(_ token: String?) -> String? { token.map(mask) }
}
