import CountdownDomain
import CountdownStore
import Foundation
import Postgres

/// The pause as the console reads and changes it (SPEC 9, 10.3): PostgreSQL's `countdown_pause` (`PauseQueries`), the
/// same rows `countdown-admin pause|resume` writes: who, why and since when. The console writes PostgreSQL only; every
/// worker's `PauseMirror` carries the change into the queue's Redis pause keys within half a second
/// (docs/operations.md, "Pausing job kinds").
extension ConsoleBackend {
    /// The actor recorded for a console user, beside `countdown-admin (<login>)`.
    static func pauseActor(_ user: String) -> String { "countdown-console (\(user))" }

    /// The paused kinds with who paused them (when known), why and since when.
    func pausedKinds() async throws -> [PauseQueries.Entry] {
        try await database.withConnection { try PauseQueries.paused(on: $0) }
    }

    /// Pauses `kinds` (every kind when empty).
    func pause(kinds: [String], reason: String, actor: String) async throws {
        let targets = kinds.isEmpty ? Self.allKinds : kinds
        try await database.withConnection { _ = try PauseQueries.pause(kinds: targets, actor: Self.pauseActor(actor), reason: reason, on: $0) }
    }

    /// Resumes `kinds` (every kind when empty); returns how many of them were paused. Resuming every kind records each
    /// as resumed (as `countdown-admin resume` does), so workers also lift a pause only Redis had.
    func resume(kinds: [String], actor: String) async throws -> Int {
        let targets = kinds.isEmpty ? Self.allKinds : kinds
        return try await database.transaction { connection in
            let wasPaused = Set(try PauseQueries.paused(on: connection).map(\.kind))
            _ = try PauseQueries.resume(kinds: targets, actor: Self.pauseActor(actor), on: connection)
            return wasPaused.intersection(targets).count
        }
    }

    private static var allKinds: [String] { CountdownJob.Kind.allCases.map(\.rawValue) }
}
