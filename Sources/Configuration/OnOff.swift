/// A feature switch read with `Environment.choice` (`APNS_BROADCAST`, `ANDROID_COUNTDOWN`): `off` or `on`.
public enum OnOff: String, Sendable, CaseIterable {
    case off, on
}
