import CountdownStore
import Foundation
import Telemetry

/// `countdown-admin tokens list|restore`: the tokens the worker cleared (`countdown_token_invalidations`) and
/// putting them back where the device has not registered another token or changed owner since (`TokenInvalidationQueries`).
public struct TokenInvalidationLog: Sendable {
    /// A cleared token; `list` redacts its value to the last 8 characters.
    public typealias Entry = TokenInvalidation
    public typealias RestoreReport = TokenInvalidationQueries.RestoreReport

    let database: StoreClient

    public init(database: StoreClient) { self.database = database }

    /// Cleared tokens since `since` (only those cleared for `reason`, when given), oldest first.
    public func list(since: SinceArgument, reason: String? = nil, limit: Int = 10_000) async throws -> [Entry] {
        try await database.withConnection { try TokenInvalidationQueries.list(since: since, reason: reason, limit: limit, on: $0) }.map { entry in
            var entry = entry
            entry.value = Redact.token(entry.value)
            return entry
        }
    }

    /// How many cleared tokens `restore` would put back now.
    public func restorable(since: SinceArgument, reason: String? = nil) async throws -> Int {
        try await database.withConnection { try TokenInvalidationQueries.restorable(since: since, reason: reason, on: $0).count }
    }

    /// Puts back the tokens cleared since `since` (for `reason`, when given) where nothing replaced them and the
    /// device has the same owner, in one transaction (`TokenInvalidationQueries.restore`); nothing when more than
    /// `limit` would go back (the report's `overLimit` says how many).
    public func restore(since: SinceArgument, reason: String? = nil, limit: Int? = nil) async throws -> RestoreReport {
        try await database.transaction { try TokenInvalidationQueries.restore(since: since, reason: reason, limit: limit, on: $0) }
    }
}
