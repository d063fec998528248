import Foundation

extension StoreClient {
    /// PostgreSQL's newest ledger time and its now (`RestoreGuardQueries.ledgerClock`).
    public func ledgerClock() async throws -> (newest: Date, now: Date) {
        try await withConnection { try RestoreGuardQueries.ledgerClock(on: $0) }
    }
}
