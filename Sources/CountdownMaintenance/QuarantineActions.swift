import CountdownStore
import Foundation
import Postgres

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
    public static func retry(_ keys: [String]?, database: PostgresClient) async throws -> RetryReport {
        let entries = try await database.withConnection { try QuarantineStore.list(on: $0) }
            .filter { keys == nil || keys?.contains($0.key) == true }
        var report = RetryReport()
        for entry in entries {
            let key = entry.key
            guard entry.kind == QuarantineStore.Kind.stream.rawValue else {
                try await database.withConnection { _ = try QuarantineStore.remove(keys: [key], on: $0) }
                report.gone.append(key)
                continue
            }
            do {
                let found = try await database.transaction { connection -> Bool in
                    let found = try !StreamStateStore.load([key], on: connection).isEmpty
                    if found { try OutboxStore.replanStream(key, on: connection) }
                    try QuarantineStore.remove(.stream, keys: [key], on: connection)
                    return found
                }
                if found { report.requeued.append(key) } else { report.gone.append(key) }
            } catch {
                guard let reason = StoreError.rowDataReason(of: error) else { throw error }
                try await database.withConnection {
                    try QuarantineStore.record(.stream, key: key, foundBy: "retry", reason: reason, on: $0)
                }
                report.stillFailing[key] = reason
            }
        }
        return report
    }
}
