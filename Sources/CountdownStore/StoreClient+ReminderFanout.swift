import CountdownDomain
import Foundation

extension StoreClient: ReminderDeliveries {
    public func reminderPages(_ streamID: String, pageSize: Int, includingSent: Bool) async throws -> (stream: StreamSnapshotRow, ends: [String])? {
        try await withConnection { connection -> (stream: StreamSnapshotRow, ends: [String])? in
            guard let stream = try StreamSnapshotQueries.load(streamID, on: connection) else { return nil }
            return (stream, try ReminderQueries.pageEnds(streamID, pageSize: pageSize, includingSent: includingSent, on: connection))
        }
    }

    public func reminderProgress(_ streamID: String) async throws -> (doneFor: Date?, followFor: Date?) {
        try await withConnection { try ProgressQueries.reminderProgress(streamID, on: $0) }
    }

    public func markReminderFollow(_ streamID: String, planned: Date) async throws {
        try await withConnection { try ProgressQueries.markReminderFollow(streamID, planned: planned, on: $0) }
    }

    public func reminderChunk(_ streamID: String, after cursor: String, through: String?, limit: Int) async throws
        -> (stream: StreamSnapshotRow?, users: [String], recipients: [ReminderQueries.Recipient]) {
        try await withConnection { connection in
            guard let loaded = try StreamSnapshotQueries.load(streamID, on: connection) else { return (nil, [], []) }
            // The page of users first (an index range scan), then their devices and preferences by key: joined
            // in one statement, the planner hashes every user and device for each page.
            let following = try ProgressQueries.reminderProgress(streamID, on: connection).followFor == loaded.snapshot.plannedStartAt
            let users = try ReminderQueries.activeUsers(streamID, after: cursor, through: through, limit: limit, includingSent: following,
                                                      on: connection)
            return (loaded, users, try ReminderQueries.recipients(users, on: connection))
        }
    }

    public func reminderClaimOwners(_ stream: String, except: String?) async throws -> [String] {
        try await withConnection { try ReminderDeliveryQueries.claimOwners(stream, except: except, on: $0) }
    }

    public func claimReminders(_ stream: String, planned: Date, leadSeconds: Int, devices: [(device: String, user: String)], seconds: Int,
                               owner: String?, deadOwners: [String]) async throws -> ReminderDeliveryQueries.Claim {
        try await transaction { connection in
            try ReminderDeliveryQueries.claim(stream, planned: planned, leadSeconds: leadSeconds, devices: devices, seconds: seconds, owner: owner,
                                            deadOwners: deadOwners, on: connection)
        }
    }

    public func remindersDelivered(_ stream: String, claim: Int64, sent: [String]) async throws {
        try await withConnection { try ReminderDeliveryQueries.record(stream, claim: claim, sent: sent, on: $0) }
    }

    public func settleReminders(_ stream: String, users: [String], refused: [DeviceTokenQueries.Invalidation], claim: Int64?,
                                sent: [String]) async throws {
        try await transaction(serializationRetries: 2) { connection in
            try DeviceTokenQueries.clear(refused, on: connection)
            if let claim {
                try ReminderDeliveryQueries.record(stream, claim: claim, sent: sent, on: connection)
                try ReminderDeliveryQueries.release(claim, on: connection)
            }
            try ReminderQueries.markSent(stream, users: users, on: connection)
        }
    }

    public func markRemindersDone(_ stream: String, planned: Date) async throws {
        try await withConnection { try ProgressQueries.markRemindersDone(stream, planned: planned, on: $0) }
    }
}
