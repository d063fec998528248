import Foundation

/// Where the console reads and changes the pause (SPEC 9, 10.3): a narrow seam between the pages and the store that
/// holds the pause (`StorePauseControl`: PostgreSQL's `countdown_pause`, as `countdown-admin pause|resume`).
public protocol PauseControl: Sendable {
    /// The paused kinds with who paused them (when known), why and since when.
    func pausedKinds() async throws -> [ConsolePause]
    /// Pauses `kinds` (every kind when empty).
    func pause(kinds: [String], reason: String, actor: String) async throws
    /// Resumes `kinds` (every kind when empty); returns how many of them were paused.
    func resume(kinds: [String], actor: String) async throws -> Int
}

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
