import Foundation

/// `android.priority` of an FCM message (an update's follows `UpdatePriority`).
public enum AndroidPriority: String, Sendable, Equatable, CaseIterable {
    /// Delivered at once, waking a dozing device; FCM may deprioritise an app whose high-priority messages show
    /// nothing, so it is kept for what changes the screen soon.
    case high = "HIGH"
    /// Delivered when the device is next awake (batched in Doze).
    case normal = "NORMAL"
}
