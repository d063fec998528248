import Foundation

extension StoreClient: OperatorRecords {
    public func quarantineEntries() async throws -> [QuarantineQueries.Entry] {
        try await withConnection { try QuarantineQueries.list(on: $0) }
    }

    public func dropQuarantined(keys: [String]?) async throws -> Int {
        try await withConnection { try QuarantineQueries.remove(keys: keys, on: $0) }
    }

    public func quarantine(_ kind: QuarantineQueries.Kind, key: String, foundBy: String, reason: String) async throws {
        try await withConnection { try QuarantineQueries.record(kind, key: key, foundBy: foundBy, reason: reason, on: $0) }
    }

    public func requeueQuarantined(stream key: String) async throws -> Bool {
        try await transaction { connection -> Bool in
            let found = try !StreamStateQueries.load([key], on: connection).isEmpty
            if found { try OutboxQueries.replanStream(key, on: connection) }
            try QuarantineQueries.remove(.stream, keys: [key], on: connection)
            return found
        }
    }

    public func tokenInvalidations(since: TimeCutoff, reason: String?, limit: Int) async throws -> [TokenInvalidation] {
        try await withConnection { try TokenInvalidationQueries.list(since: since, reason: reason, limit: limit, on: $0) }
    }

    public func restorableTokens(since: TimeCutoff, reason: String?) async throws -> Int {
        try await withConnection { try TokenInvalidationQueries.restorable(since: since, reason: reason, on: $0).count }
    }

    public func restoreTokens(since: TimeCutoff, reason: String?, limit: Int?) async throws -> TokenInvalidationQueries.RestoreReport {
        try await transaction { try TokenInvalidationQueries.restore(since: since, reason: reason, limit: limit, on: $0) }
    }

    public func fleetCounts(aheadSeconds: Int) async throws -> (counts: FleetStatsQueries.Counts, paused: [PauseQueries.Entry]) {
        try await withConnection { connection in
            (try FleetStatsQueries.counts(aheadSeconds: aheadSeconds, on: connection), try PauseQueries.paused(on: connection))
        }
    }

    public func streamReportRows(_ streamID: String) async throws -> StreamReportQueries.Rows? {
        try await withConnection { connection -> StreamReportQueries.Rows? in
            guard let stream = try StreamReportQueries.stream(streamID, on: connection) else { return nil }
            return StreamReportQueries.Rows(
                stream: stream, devices: try StreamReportQueries.devices(streamID, on: connection),
                sessions: try StreamReportQueries.sessions(streamID, on: connection),
                endDelivery: try StreamReportQueries.endDelivery(streamID, on: connection),
                participants: try StreamReportQueries.participants(streamID, on: connection),
                ledger: try StreamReportQueries.ledger(streamID, on: connection),
                reminders: try StreamReportQueries.reminders(streamID, on: connection))
        }
    }
}
