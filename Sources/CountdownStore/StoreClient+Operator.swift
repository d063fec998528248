extension StoreClient {
    /// Every entry of the quarantine.
    public func quarantineEntries() async throws -> [QuarantineQueries.Entry] {
        try await withConnection { try QuarantineQueries.list(on: $0) }
    }

    /// Drops the entries of `keys` (nil: every entry); how many went.
    public func dropQuarantined(keys: [String]?) async throws -> Int {
        try await withConnection { try QuarantineQueries.remove(keys: keys, on: $0) }
    }

    /// Records `key` in the quarantine (again), with `reason`.
    public func quarantine(_ kind: QuarantineQueries.Kind, key: String, foundBy: String, reason: String) async throws {
        try await withConnection { try QuarantineQueries.record(kind, key: key, foundBy: foundBy, reason: reason, on: $0) }
    }

    /// How many entries the quarantine holds.
    public func quarantined() async throws -> Int {
        try await withConnection { try QuarantineQueries.count(on: $0) }
    }
}
