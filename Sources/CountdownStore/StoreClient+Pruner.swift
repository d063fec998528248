extension StoreClient: PrunerStore {
    public func agedStreams(olderThan seconds: Double, limit: Int) async throws -> [String] {
        try await withConnection { try RetentionStore.agedStreams(olderThan: seconds, limit: limit, on: $0) }
    }

    public func deleteRows(of streams: [String], from table: RetentionStore.StreamTable, limit: Int) async throws -> Int {
        try await withConnection { try RetentionStore.deleteRows(of: streams, from: table, limit: limit, on: $0) }
    }

    public func deleteAged(_ table: RetentionStore.AgedTable, olderThan seconds: Double, limit: Int) async throws -> Int {
        try await withConnection { try RetentionStore.deleteAged(table, olderThan: seconds, limit: limit, on: $0) }
    }

    public func retentionDue(streamsOlderThan seconds: Double, auditOlderThan auditSeconds: Double) async throws -> [String: Int] {
        try await withConnection { try RetentionStore.due(streamsOlderThan: seconds, auditOlderThan: auditSeconds, on: $0) }
    }

    public func retentionOldestAges() async throws -> [String: Double] {
        try await withConnection { try RetentionStore.oldestAges(on: $0) }
    }
}
