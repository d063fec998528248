extension StoreClient: WorkerServiceData {
    public func keepClaims(owner: String, held: [StartLedger.Key], releasing: [StartLedger.Key], seconds: Int) async throws
        -> (extended: Int, released: Int, waiting: [StartLedger.Key]) {
        try await transaction { try StartLedger.keepClaims(owner: owner, held: held, releasing: releasing, seconds: seconds, on: $0) }
    }

    public func pauseStates() async throws -> [PauseQueries.Entry] {
        try await withConnection { try PauseQueries.all(on: $0) }
    }

    public func outboxBacklog() async throws -> (rows: Int, oldestSeconds: Double) {
        try await withConnection { try OutboxQueries.backlog(on: $0) }
    }

    public func quarantined() async throws -> Int {
        try await withConnection { try QuarantineQueries.count(on: $0) }
    }

    public func connectionLimits() async throws -> (maxConnections: Int, reserved: Int) {
        try await withConnection { try ServerSettingsQueries.connectionLimits(on: $0) }
    }
}
