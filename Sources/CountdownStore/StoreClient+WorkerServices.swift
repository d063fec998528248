extension StoreClient: WorkerServiceStore {
    public func keepClaims(owner: String, held: [StartLedger.Key], releasing: [StartLedger.Key], seconds: Int) async throws
        -> (extended: Int, released: Int, waiting: [StartLedger.Key]) {
        try await transaction { try StartLedger.keepClaims(owner: owner, held: held, releasing: releasing, seconds: seconds, on: $0) }
    }

    public func pauseStates() async throws -> [PauseStore.Entry] {
        try await withConnection { try PauseStore.all(on: $0) }
    }

    public func outboxBacklog() async throws -> (rows: Int, oldestSeconds: Double) {
        try await withConnection { try OutboxStore.backlog(on: $0) }
    }

    public func quarantined() async throws -> Int {
        try await withConnection { try QuarantineStore.count(on: $0) }
    }

    public func connectionLimits() async throws -> (maxConnections: Int, reserved: Int) {
        try await withConnection { try ServerSettingsStore.connectionLimits(on: $0) }
    }
}
