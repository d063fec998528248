import Foundation

/// How urgently an update carrying a new planned start goes out, on both platforms (SPEC 12.2's one rule): iOS
/// `apns-priority` and Android `android.priority` follow the same decision.
public enum UpdatePriority: Sendable, Equatable, CaseIterable {
    /// At once: `apns-priority` 10, Android `HIGH`.
    case immediate
    /// When convenient for the device: `apns-priority` 5 (spares Apple's budget), Android `NORMAL` (batched in Doze).
    case conserving

    /// Closer than this to the start, an update always goes at once.
    public static let urgentWithinSeconds: TimeInterval = 15 * 60

    /// The rule: `immediate` when the new start is earlier than the one the countdown shows, or the earlier of the
    /// two is 15 minutes away or less (or what it shows is not known); else `conserving`. `shown` is the planned start
    /// of the last push the push service accepted for the countdown, its start included.
    public static func of(newStart: Date, shown: Date?, now: Date) -> UpdatePriority {
        guard let shown, newStart >= shown else { return .immediate }
        return shown.timeIntervalSince(now) > urgentWithinSeconds ? .conserving : .immediate
    }

    /// The `apns-priority` header value.
    public var apnsPriority: String {
        switch self {
        case .immediate: "10"
        case .conserving: "5"
        }
    }

    /// `android.priority`.
    public var android: AndroidPriority {
        switch self {
        case .immediate: .high
        case .conserving: .normal
        }
    }
}
