import CountdownDomain
import Foundation

extension StoreClient: ChannelKeeperStore {
    public func claimChannel(stream: String, claim: String, maxAlive: Int, holdSeconds: Int) async throws -> ChannelClaim {
        try await transaction(serializationRetries: 2) {
            try BroadcastChannels.claim(stream: stream, claim: claim, maxAlive: maxAlive, holdSeconds: holdSeconds, on: $0)
        }
    }

    public func recordChannelCreated(row: Int64, claim: String, channelID: String) async throws -> Bool {
        try await withConnection { try BroadcastChannels.recordCreated(row: row, claim: claim, channelID: channelID, on: $0) }
    }

    public func recordChannelFailure(row: Int64, claim: String, error: String, retryAfterSeconds: Double, giveUp: Bool) async throws {
        try await withConnection {
            try BroadcastChannels.recordFailure(row: row, claim: claim, error: error, retryAfterSeconds: retryAfterSeconds, giveUp: giveUp, on: $0)
        }
    }

    public func streamAndChannel(_ stream: String) async throws -> (stream: StreamSnapshotRow, channel: BroadcastChannel?)? {
        try await transaction(isolation: .repeatableRead) { connection in
            guard let row = try StreamSnapshotQueries.loadCounted(stream, leading: true, on: connection) else { return nil }
            var channel = try BroadcastChannels.usable(stream: stream, on: connection)
            if let used = channel {
                channel?.latestStartAt = try BroadcastChannels.latestStart(used, current: row.snapshot.plannedStartAt, on: connection)
            }
            return (row, channel)
        }
    }

    public func markChannelUsed(_ channelID: String, shown: Date, replacing: Bool) async throws {
        try await withConnection { try BroadcastChannels.markUsed(channelID: channelID, shown: shown, replacing: replacing, on: $0) }
    }

    public func retireChannel(_ channelID: String, ended: Bool, deleteAfterSeconds: Double) async throws {
        try await withConnection { try BroadcastChannels.retire(channelID: channelID, ended: ended, deleteAfterSeconds: deleteAfterSeconds, on: $0) }
    }

    public func retireMovedChannel(_ channelID: String, stream: String, deleteAfterSeconds: Double) async throws {
        try await transaction { connection in
            _ = try StartLedger.reopenOutlived([stream], lifetimeSeconds: SessionUpdatePolicy.activityLifetimeSeconds, on: connection)
            try BroadcastChannels.retire(channelID: channelID, ended: true, deleteAfterSeconds: deleteAfterSeconds, on: connection)
        }
    }

    public func devices(_ devices: [String], reportingAtLeast minMajor: Int) async throws -> Set<String> {
        try await withConnection { try BroadcastChannels.devices(devices, reportingAtLeast: minMajor, on: $0) }
    }

    public func retireAbandonedChannels(graceSeconds: Double) async throws -> Int {
        try await withConnection { try BroadcastChannels.retireAbandoned(graceSeconds: graceSeconds, on: $0) }
    }

    public func dropUnneededChannelIntents() async throws -> Int {
        try await withConnection { try BroadcastChannels.dropUnneeded(on: $0) }
    }

    public func channelIntentsDue(holdSeconds: Int, limit: Int) async throws -> [String] {
        try await withConnection { try BroadcastChannels.intentsDue(holdSeconds: holdSeconds, limit: limit, on: $0) }
    }

    public func channelsDueForDeletion(limit: Int) async throws -> [String] {
        try await withConnection { try BroadcastChannels.dueForDeletion(limit: limit, on: $0) }
    }

    public func forgetChannel(_ channelID: String) async throws {
        try await withConnection { try BroadcastChannels.forget(channelID: channelID, on: $0) }
    }

    public func orphanChannels(listed: [String], graceSeconds: Double) async throws -> [String] {
        try await transaction { try BroadcastChannels.orphans(listed: listed, graceSeconds: graceSeconds, on: $0) }
    }

    public func forgetOrphanChannel(_ channelID: String) async throws {
        try await withConnection { try BroadcastChannels.forgetOrphan(channelID: channelID, on: $0) }
    }

    public func aliveChannels() async throws -> Int {
        try await withConnection { try BroadcastChannels.aliveCount(on: $0) }
    }
}
