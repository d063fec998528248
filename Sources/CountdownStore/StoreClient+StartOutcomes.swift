extension StoreClient: StartOutcomeStore {
    /// Deadlocks are retried at once; any other error comes back to the caller (the settler retries with backoff).
    public func settle(_ settlements: [LedgerSettlement], refused: [DeviceTokenStore.Invalidation]) async throws {
        try await transaction(serializationRetries: 2) { connection in
            try StartLedgerStore.settle(settlements, on: connection)
            try DeviceTokenStore.clear(refused, on: connection)
        }
    }
}
