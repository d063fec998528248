import Foundation

/// A job kind whose claiming is paused: its jobs stay due and are claimed again after `resume`.
public struct PausedKind: Sendable, Hashable, Codable {
    public let kind: String
    public let reason: String
    /// When it was paused, by the queue's clock.
    public let since: Date

    public init(kind: String, reason: String, since: Date) {
        self.kind = kind
        self.reason = reason
        self.since = since
    }
}
