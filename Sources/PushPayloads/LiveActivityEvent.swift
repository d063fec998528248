/// The `aps.event` of a Live Activity push.
public enum LiveActivityEvent: String, Sendable, Equatable, CaseIterable {
    case start
    case update
    case end
}
