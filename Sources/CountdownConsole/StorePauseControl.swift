import CountdownStore
import Foundation
import Postgres

/// The pause in PostgreSQL (`PauseQueries`, SPEC 10.3), the same rows `countdown-admin pause|resume` writes: who, why
/// and since when. The console writes PostgreSQL only; every worker's `PauseMirror` carries the change into the
/// queue's Redis pause keys within half a second (docs/operations.md, "Pausing job kinds").
public struct StorePauseControl: PauseControl {
    let database: PostgresClient
    let allKinds: [String]

    public init(database: PostgresClient, allKinds: [String]) {
        self.database = database
        self.allKinds = allKinds
    }

    /// The actor recorded for a console user, beside `countdown-admin (<login>)`.
    public static func actor(_ user: String) -> String { "countdown-console (\(user))" }

    public func pausedKinds() async throws -> [ConsolePause] {
        try await database.withConnection { try PauseQueries.paused(on: $0) }
            .map { ConsolePause(kind: $0.kind, actor: $0.actor, reason: $0.reason, since: $0.since) }
    }

    public func pause(kinds: [String], reason: String, actor: String) async throws {
        let targets = kinds.isEmpty ? allKinds : kinds
        try await database.withConnection { _ = try PauseQueries.pause(kinds: targets, actor: Self.actor(actor), reason: reason, on: $0) }
    }

    /// Resuming every kind records each as resumed (as `countdown-admin resume` does), so workers also lift a pause
    /// only Redis had.
    public func resume(kinds: [String], actor: String) async throws -> Int {
        let targets = kinds.isEmpty ? allKinds : kinds
        return try await database.transaction { connection in
            let wasPaused = Set(try PauseQueries.paused(on: connection).map(\.kind))
            _ = try PauseQueries.resume(kinds: targets, actor: Self.actor(actor), on: connection)
            return wasPaused.intersection(targets).count
        }
    }
}
