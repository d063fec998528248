extension StoreClient: PrunableRows {
    public func agedStreams(olderThan seconds: Double, limit: Int) async throws -> [String] {
        try await withConnection { try RetentionQueries.agedStreams(olderThan: seconds, limit: limit, on: $0) }
    }

    public func deleteRows(of streams: [String], from table: RetentionQueries.StreamTable, limit: Int) async throws -> Int {
        try await withConnection { try RetentionQueries.deleteRows(of: streams, from: table, limit: limit, on: $0) }
    }

    public func deleteAged(_ table: RetentionQueries.AgedTable, olderThan seconds: Double, limit: Int) async throws -> Int {
        try await withConnection { try RetentionQueries.deleteAged(table, olderThan: seconds, limit: limit, on: $0) }
    }

    public func retentionDue(streamsOlderThan seconds: Double, auditOlderThan auditSeconds: Double) async throws -> [String: Int] {
        try await withConnection { try RetentionQueries.due(streamsOlderThan: seconds, auditOlderThan: auditSeconds, on: $0) }
    }

    public func retentionOldestAges() async throws -> [String: Double] {
        try await withConnection { try RetentionQueries.oldestAges(on: $0) }
    }
}
