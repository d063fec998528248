import Foundation

/// A paused kind as the console shows it.
public struct ConsolePause: Sendable, Equatable, Codable {
    public var kind: String
    /// Who paused it: `countdown-console (<user>)` or `countdown-admin (<login>)`.
    public var actor: String
    public var reason: String
    public var since: Date

    public init(kind: String, actor: String, reason: String, since: Date) {
        self.kind = kind
        self.actor = actor
        self.reason = reason
        self.since = since
    }
}
