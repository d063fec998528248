import Foundation

extension StoreClient: OperatorStore {
    public func quarantineEntries() async throws -> [QuarantineStore.Entry] {
        try await withConnection { try QuarantineStore.list(on: $0) }
    }

    public func dropQuarantined(keys: [String]?) async throws -> Int {
        try await withConnection { try QuarantineStore.remove(keys: keys, on: $0) }
    }

    public func quarantine(_ kind: QuarantineStore.Kind, key: String, foundBy: String, reason: String) async throws {
        try await withConnection { try QuarantineStore.record(kind, key: key, foundBy: foundBy, reason: reason, on: $0) }
    }

    public func requeueQuarantined(stream key: String) async throws -> Bool {
        try await transaction { connection -> Bool in
            let found = try !StreamStateStore.load([key], on: connection).isEmpty
            if found { try OutboxStore.replanStream(key, on: connection) }
            try QuarantineStore.remove(.stream, keys: [key], on: connection)
            return found
        }
    }

    public func tokenInvalidations(since: TimeCutoff, reason: String?, limit: Int) async throws -> [TokenInvalidation] {
        try await withConnection { try TokenInvalidationStore.list(since: since, reason: reason, limit: limit, on: $0) }
    }

    public func restorableTokens(since: TimeCutoff, reason: String?) async throws -> Int {
        try await withConnection { try TokenInvalidationStore.restorable(since: since, reason: reason, on: $0).count }
    }

    public func restoreTokens(since: TimeCutoff, reason: String?, limit: Int?) async throws -> TokenInvalidationStore.RestoreReport {
        try await transaction { try TokenInvalidationStore.restore(since: since, reason: reason, limit: limit, on: $0) }
    }

    public func fleetCounts(aheadSeconds: Int) async throws -> (counts: FleetStatsStore.Counts, paused: [PauseStore.Entry]) {
        try await withConnection { connection in
            (try FleetStatsStore.counts(aheadSeconds: aheadSeconds, on: connection), try PauseStore.paused(on: connection))
        }
    }

    public func streamReportRows(_ streamID: String) async throws -> StreamReportStore.Rows? {
        try await withConnection { connection -> StreamReportStore.Rows? in
            guard let stream = try StreamReportStore.stream(streamID, on: connection) else { return nil }
            return StreamReportStore.Rows(
                stream: stream, devices: try StreamReportStore.devices(streamID, on: connection),
                sessions: try StreamReportStore.sessions(streamID, on: connection),
                endDelivery: try StreamReportStore.endDelivery(streamID, on: connection),
                participants: try StreamReportStore.participants(streamID, on: connection),
                ledger: try StreamReportStore.ledger(streamID, on: connection),
                reminders: try StreamReportStore.reminders(streamID, on: connection))
        }
    }
}
