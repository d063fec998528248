extension StoreClient: StartOutcomeSettling {
    /// Deadlocks are retried at once; any other error comes back to the caller (the settler retries with backoff).
    public func settle(_ settlements: [StartLedger.Settlement], refused: [DeviceTokenQueries.Invalidation]) async throws -> [StartLedger.Refused] {
        try await transaction(serializationRetries: 2) { connection in
            let notWritten = try StartLedger.settle(settlements, on: connection)
            try DeviceTokenQueries.clear(refused, on: connection)
            return notWritten
        }
    }
}
