import Foundation
import DelayQueue

/// Where the console reads and changes the pause (SPEC 9, 10.3): a narrow seam, so the store that holds the pause
/// (today the queue in Redis; PostgreSQL with its actor and reason per SPEC 10.3) can change without touching pages.
public protocol PauseControl: Sendable {
    /// The paused kinds with who paused them (when known), why and since when.
    func pausedKinds() async throws -> [ConsolePause]
    /// Pauses `kinds` (every kind when empty).
    func pause(kinds: [String], reason: String, actor: String) async throws
    /// Resumes `kinds` (every paused kind when empty); returns the held jobs made claimable again.
    func resume(kinds: [String], actor: String) async throws -> Int
}

/// A paused kind as the console shows it.
public struct ConsolePause: Sendable, Equatable, Codable {
    public var kind: String
    public var actor: String?
    public var reason: String
    public var since: Date

    public init(kind: String, actor: String?, reason: String, since: Date) {
        self.kind = kind
        self.actor = actor
        self.reason = reason
        self.since = since
    }
}

/// The pause as `countdown-admin pause` keeps it today: in the queue (Redis), without an actor (the audit row has it).
public struct QueuePauseControl: PauseControl {
    let queue: any DelayQueue
    let allKinds: [String]

    public init(queue: any DelayQueue, allKinds: [String]) {
        self.queue = queue
        self.allKinds = allKinds
    }

    public func pausedKinds() async throws -> [ConsolePause] {
        try await queue.pausedKinds().map { ConsolePause(kind: $0.kind, actor: nil, reason: $0.reason, since: $0.since) }
    }

    public func pause(kinds: [String], reason: String, actor: String) async throws {
        try await queue.pause(kinds: kinds.isEmpty ? allKinds : kinds, reason: reason)
    }

    public func resume(kinds: [String], actor: String) async throws -> Int {
        try await queue.resume(kinds: kinds)
    }
}
