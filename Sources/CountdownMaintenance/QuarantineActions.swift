import CountdownStore
import Foundation

/// What `countdown-admin quarantine retry|drop` do: a retried stream that now reads and plans goes back through
/// the outbox (planned again as rescheduled) and leaves the quarantine; one that still fails stays with its new
/// reason; one that is gone just leaves.
public enum QuarantineActions {
    /// The result of a retry, per key.
    public struct RetryReport: Sendable, Codable, Equatable {
        public var requeued: [String] = []
        public var gone: [String] = []
        public var stillFailing: [String: String] = [:]
    }

    /// Retries `keys` (nil: every entry).
    public static func retry(_ keys: [String]?, database: StoreClient) async throws -> RetryReport {
        let entries = try await database.quarantineEntries()
            .filter { keys == nil || keys?.contains($0.key) == true }
        var report = RetryReport()
        for entry in entries {
            let key = entry.key
            guard entry.kind == QuarantineQueries.Kind.stream.rawValue else {
                _ = try await database.dropQuarantined(keys: [key])
                report.gone.append(key)
                continue
            }
            do {
                if try await requeue(key, database: database) { report.requeued.append(key) } else { report.gone.append(key) }
            } catch {
                guard let reason = StoreError.rowDataReason(of: error) else { throw error }
                try await database.quarantine(.stream, key: key, foundBy: "retry", reason: reason)
                report.stillFailing[key] = reason
            }
        }
        return report
    }

    /// In one transaction: a quarantined stream that still exists goes back through the outbox (planned again as
    /// rescheduled); either way it leaves the quarantine. False when the stream is gone.
    private static func requeue(_ key: String, database: StoreClient) async throws -> Bool {
        try await database.transaction { connection -> Bool in
            let found = try !StreamStateQueries.load([key], on: connection).isEmpty
            if found { try OutboxQueries.replanStream(key, on: connection) }
            try QuarantineQueries.remove(.stream, keys: [key], on: connection)
            return found
        }
    }
}
