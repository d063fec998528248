/// A `messages:send` request that passed the shape checks.
struct ValidatedMessage: Sendable {
    /// `start`, `update`, `end` for Live Activity pushes, `android_start`, `android_update`, `android_end` for the
    /// Android countdown's data messages, `data` for other data messages, `notification` otherwise.
    let event: String
    /// `message.token`, the device's FCM registration token.
    let token: String
    /// `message.apns.live_activity_token`, for Live Activity pushes.
    let liveActivityToken: String?
    /// `validate_only` was set: checked, answered, not recorded as sent.
    let validateOnly: Bool
}
