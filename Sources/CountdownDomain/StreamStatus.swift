/// A stream's lifecycle status, as the schema contract spells it.
public enum StreamStatus: String, Sendable, CaseIterable, Codable {
    case scheduled, ready, started, cancelled, expired

    /// `ready`, `started`, `cancelled` and `expired` end the Live Activity.
    public var isTerminal: Bool { self != .scheduled }
}
