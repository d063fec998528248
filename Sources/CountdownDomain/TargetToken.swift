/// Which of a device's tokens a push service refused: the one that is cleared, recorded and restorable.
public enum TargetToken: String, Sendable, Codable, CaseIterable {
    /// `devices.fcm_token`.
    case fcm
    /// `devices.push_to_start_token`.
    case pushToStart = "push_to_start"
    /// `live_activity_sessions.live_activity_token` (clearing it ends the session row).
    case runtime
}
