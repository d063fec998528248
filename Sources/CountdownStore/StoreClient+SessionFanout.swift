import CountdownDomain
import Foundation

extension StoreClient: SessionDeliveries {
    public func endClaimOwners(_ stream: String, except: String?) async throws -> [String] {
        try await withConnection { try SessionQueries.endClaimOwners(stream, except: except, on: $0) }
    }

    public func sessions(of streamID: String, device: String?, claimingFor seconds: Int, owner: String?, deadOwners: [String]) async throws
        -> (stream: StreamSnapshotRow, othersClaimed: Int, heldFor: Double?, sessions: [Session])? {
        try await transaction { connection -> (stream: StreamSnapshotRow, othersClaimed: Int, heldFor: Double?, sessions: [Session])? in
            // The names the payloads show and the roles of the sessions' users, not every participant.
            guard var stream = try StreamSnapshotQueries.loadCounted(streamID, leading: true, on: connection) else { return nil }
            func withRoles(_ sessions: [Session]) throws -> [Session] {
                let users = sessions.compactMap(\.user).filter { stream.roles[$0] == nil }
                stream.roles.merge(try StreamSnapshotQueries.roles(of: streamID, users: users, on: connection)) { $1 }
                return sessions
            }
            if stream.status.isTerminal {
                try SessionQueries.adoptOrphans(streamID, device: device, on: connection)
                let claimed = try SessionQueries.claimEnds(streamID, device: device, seconds: seconds, owner: owner, deadOwners: deadOwners,
                                                         on: connection)
                let (total, heldFor) = try SessionQueries.count(streamID, device: device, claimed: claimed, on: connection)
                let sessions = try withRoles(try SessionQueries.sessions(streamID, devices: claimed, on: connection))
                return (stream, total - claimed.count, heldFor, sessions)
            }
            let sessions = try withRoles(try SessionQueries.sessions(streamID, devices: device.map { [$0] }, on: connection))
            return (stream, 0, nil, sessions)
        }
    }

    public func endsAccepted(_ accepted: [Session], stream: String) async throws -> Int {
        try await settleEnds(stream, refused: [], finished: accepted, done: accepted, failed: [], windowSeconds: 0, claimed: [], holding: []).deleted
    }

    public func settleEnds(_ stream: String, refused: [DeviceTokenQueries.Invalidation], finished: [Session], done: [Session],
                           failed: [EndDeliveryQueries.Failure], windowSeconds: Int, claimed: [String],
                           holding: [EndDeliveryQueries.Hold]) async throws
        -> (deleted: Int, ledger: EndDeliveryQueries.Outcome) {
        try await transaction { connection in
            try DeviceTokenQueries.clear(refused, on: connection)
            let deleted = try SessionQueries.delete(stream, finished, on: connection)
            try EndDeliveryQueries.settled(done.map(\.device), activities: done.map(\.activity), stream: stream, on: connection)
            var ledger = try EndDeliveryQueries.record(failed, stream: stream, windowSeconds: windowSeconds, on: connection)
            // Release what is left (to be retried, or re-registered with a new token meanwhile), but for the devices
            // whose `Retry-After` runs and whose end is still retried: held until it has passed.
            let held = try EndDeliveryQueries.hold(holding, stream: stream, windowSeconds: windowSeconds, into: &ledger, on: connection)
            try SessionQueries.releaseEndClaims(stream, devices: claimed.filter { !held.contains($0) }, on: connection)
            return (deleted, ledger)
        }
    }

    public func claimRetired(stream streamID: String, device: String, seconds: Int, owner: String?) async throws
        -> (stream: StreamSnapshotRow?, retired: [RetiredSessionQueries.Retired], total: Int) {
        try await transaction { connection -> (stream: StreamSnapshotRow?, retired: [RetiredSessionQueries.Retired], total: Int) in
            let retired = try RetiredSessionQueries.claim(stream: streamID, device: device, seconds: seconds, owner: owner, on: connection)
            let total = try RetiredSessionQueries.count(stream: streamID, device: device, on: connection)
            guard !retired.isEmpty else { return (nil, retired, total) }
            return (try StreamSnapshotQueries.loadCounted(streamID, on: connection), retired, total)
        }
    }

    public func finishRetired(stream: String, device: String, tokens: [String]) async throws -> Int {
        try await withConnection { try RetiredSessionQueries.finished(stream: stream, device: device, tokens: tokens, on: $0) }
    }

    public func settleRetired(stream: String, device: String, refused: [DeviceTokenQueries.Invalidation], done: [String],
                              failed: [RetiredSessionQueries.Failure], windowSeconds: Int) async throws -> EndDeliveryQueries.Outcome {
        try await transaction { connection in
            try DeviceTokenQueries.clear(refused, on: connection)
            try RetiredSessionQueries.finished(stream: stream, device: device, tokens: done, on: connection)
            return try RetiredSessionQueries.failed(failed, stream: stream, device: device, windowSeconds: windowSeconds, on: connection)
        }
    }

    public func updateClaimOwners(_ stream: String, except: String?) async throws -> [String] {
        try await withConnection { try ProgressQueries.updateClaimOwners(stream, except: except, on: $0) }
    }

    public func claimUpdate(_ stream: String, claim: String, seconds: Int, owner: String?, deadOwners: [String]) async throws
        -> ProgressQueries.UpdateClaim {
        try await withConnection { try ProgressQueries.claimUpdate(stream, claim: claim, seconds: seconds, owner: owner, deadOwners: deadOwners, on: $0) }
    }

    public func extendUpdate(_ stream: String, claim: String, seconds: Int) async throws -> Bool {
        try await withConnection { try ProgressQueries.extendUpdate(stream, claim: claim, seconds: seconds, on: $0) }
    }

    public func releaseUpdate(_ stream: String, claim: String) async throws {
        try await withConnection { try ProgressQueries.releaseUpdate(stream, claim: claim, on: $0) }
    }

    public func plannedStart(_ stream: String) async throws -> Date? {
        try await withConnection { try ProgressQueries.plannedStart(stream, on: $0) }
    }

    public func markUpdateDone(_ stream: String, planned: Date) async throws {
        try await withConnection { try ProgressQueries.markUpdateDone(stream, planned: planned, on: $0) }
    }

    public func retireOutlived(_ stream: String, devices: [String]) async throws {
        _ = try await transaction { connection in
            try StartLedger.reopenOutlived([stream], lifetimeSeconds: SessionUpdatePolicy.activityLifetimeSeconds, on: connection)
            try RetiredSessionQueries.retireOutlived(stream, devices: devices, on: connection)
        }
    }

    public func sessionsToUpdate(_ streamID: String) async throws
        -> (stream: StreamSnapshotRow, sessions: [Session], known: SessionDeliveryQueries.Knowledge)? {
        try await transaction(isolation: .repeatableRead) { connection -> (stream: StreamSnapshotRow, sessions: [Session], known: SessionDeliveryQueries.Knowledge)? in
            guard let stream = try StreamSnapshotQueries.loadCounted(streamID, on: connection) else { return nil }
            let sessions = try SessionQueries.sessions(streamID, devices: nil, on: connection)
            return (stream, sessions, try SessionDeliveryQueries.knowledge(streamID, planned: stream.snapshot.plannedStartAt, channel: .liveActivity,
                                                                         on: connection))
        }
    }

    public func updatesAccepted(_ stream: String, accepted: [Session], shown: Date) async throws {
        try await settleUpdates(stream, refused: [], accepted: accepted, shown: shown)
    }

    public func settleUpdates(_ stream: String, refused: [DeviceTokenQueries.Invalidation], accepted: [Session], shown: Date) async throws {
        try await transaction { connection in
            try DeviceTokenQueries.clear(refused, on: connection)
            try SessionDeliveryQueries.recordAccepted(stream, channel: .liveActivity, accepted: accepted.map { ($0.device, $0.activity, $0.activityToken) },
                                                      shown: shown, on: connection)
        }
    }
}
