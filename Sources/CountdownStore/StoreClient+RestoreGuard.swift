import Foundation

extension StoreClient {
    /// PostgreSQL's newest ledger time and its now (`RestoreGuardStore.ledgerClock`).
    public func ledgerClock() async throws -> (newest: Date, now: Date) {
        try await withConnection { try RestoreGuardStore.ledgerClock(on: $0) }
    }
}
