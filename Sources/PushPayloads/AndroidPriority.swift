import Foundation

/// `android.priority` of an FCM message.
public enum AndroidPriority: String, Sendable, Equatable, CaseIterable {
    /// Delivered at once, waking a dozing device; FCM may deprioritise an app whose high-priority messages show
    /// nothing, so it is kept for what changes the screen soon.
    case high = "HIGH"
    /// Delivered when the device is next awake (batched in Doze).
    case normal = "NORMAL"

    /// An update's priority makes no difference this close to the start (15 minutes, as for iOS' `apns-priority`).
    public static let urgentWithinSeconds: TimeInterval = 15 * 60

    /// SPEC 10.4's rule for an update: `NORMAL` when the new start is later than the one the device last accepted
    /// and more than 15 minutes after `now`; `HIGH` when it is earlier or the same, 15 minutes away or less, or the
    /// device's last accepted start is unknown.
    public static func forUpdate(newStart: Date, lastAcceptedStart: Date?, now: Date) -> AndroidPriority {
        guard let lastAcceptedStart, newStart > lastAcceptedStart else { return .high }
        return newStart.timeIntervalSince(now) > urgentWithinSeconds ? .normal : .high
    }
}
