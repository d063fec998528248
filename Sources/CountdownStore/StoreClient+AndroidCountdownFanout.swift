import CountdownDomain
import Foundation

extension StoreClient: AndroidCountdownDeliveries {
    public func claimChangedCountdowns(device: String, seconds: Int, owner: String?) async throws
        -> (streams: [String: StreamSnapshotRow], countdowns: [Countdown], timelines: [String: PlannedStartTimeline], elsewhere: Int, heldFor: Double?) {
        try await transaction { connection -> (streams: [String: StreamSnapshotRow], countdowns: [Countdown], timelines: [String: PlannedStartTimeline], elsewhere: Int, heldFor: Double?) in
            let (elsewhere, heldFor) = try AndroidCountdownQueries.changedClaimedElsewhere(device: device, owner: owner, on: connection)
            let claimed = try AndroidCountdownQueries.claimChanged(device: device, seconds: seconds, owner: owner, on: connection)
            guard !claimed.isEmpty else { return ([:], [], [:], elsewhere, heldFor) }
            var streams = try StreamSnapshotQueries.loadReadable(Array(Set(claimed.map(\.stream))), on: connection).rows
            try ViewerCountQuery.fill(&streams, on: connection)
            let timelines = try streams.mapValues {
                try PlannedStartHistoryQueries.timeline($0.snapshot.id, current: $0.snapshot.plannedStartAt, on: connection)
            }
            return (streams, claimed, timelines, elsewhere, heldFor)
        }
    }

    public func claimCountdownsToEnd(_ streamID: String, seconds: Int, owner: String?) async throws
        -> (stream: StreamSnapshotRow, countdowns: [Countdown], elsewhere: Int, heldFor: Double?, inFlight: Int, timeline: PlannedStartTimeline)? {
        try await transaction { connection
            -> (stream: StreamSnapshotRow, countdowns: [Countdown], elsewhere: Int, heldFor: Double?, inFlight: Int, timeline: PlannedStartTimeline)? in
            // The names the payloads show and the roles of the claimed countdowns' users, not every participant.
            guard var stream = try StreamSnapshotQueries.loadCounted(streamID, leading: true, if: { $0.status.isTerminal }, on: connection)
            else { return nil }
            let (elsewhere, heldFor) = try AndroidCountdownQueries.claimedElsewhere(streamID, owner: owner, on: connection)
            let claimed = try AndroidCountdownQueries.claimLive(streamID, seconds: seconds, owner: owner, on: connection)
            let users = Array(Set(claimed.map(\.user).filter { stream.roles[$0] == nil }))
            stream.roles.merge(try StreamSnapshotQueries.roles(of: streamID, users: users, on: connection)) { $1 }
            let planned = stream.snapshot.plannedStartAt
            let timeline = claimed.isEmpty ? .unmoved(planned) : try PlannedStartHistoryQueries.timeline(streamID, current: planned, on: connection)
            return (stream, claimed, elsewhere, heldFor, try AndroidCountdownQueries.startsInFlight(streamID, on: connection), timeline)
        }
    }

    public func claimCountdownsToUpdate(_ streamID: String, seconds: Int, owner: String?) async throws
        -> (stream: StreamSnapshotRow, countdowns: [Countdown], inFlight: Int, timeline: PlannedStartTimeline)? {
        try await transaction { connection -> (stream: StreamSnapshotRow, countdowns: [Countdown], inFlight: Int, timeline: PlannedStartTimeline)? in
            guard let stream = try StreamSnapshotQueries.loadCounted(streamID, if: { $0.status == .scheduled }, on: connection) else { return nil }
            let planned = stream.snapshot.plannedStartAt
            let claimed = try AndroidCountdownQueries.claimLive(streamID, seconds: seconds, owner: owner, unlessShowing: planned, on: connection)
            let timeline = claimed.isEmpty ? .unmoved(planned) : try PlannedStartHistoryQueries.timeline(streamID, current: planned, on: connection)
            return (stream, claimed, try AndroidCountdownQueries.startsInFlight(streamID, on: connection), timeline)
        }
    }

    public func countdownsAccepted(_ accepted: [AndroidCountdownQueries.Settlement], stream: String, plannedStart: Date?, ended: Bool) async throws {
        try await transaction { connection in
            try AndroidCountdownQueries.settle(stream, accepted, plannedStart: plannedStart, on: connection)
            if ended { try EndDeliveryQueries.settled(accepted.map(\.device), stream: stream, on: connection) }
        }
    }

    public func settleCountdowns(_ settlements: [String: [AndroidCountdownQueries.Settlement]], refused: [DeviceTokenQueries.Invalidation],
                                 plannedStart: Date?) async throws {
        try await transaction { connection in
            try DeviceTokenQueries.clear(refused, on: connection)
            for (stream, rows) in settlements.sorted(by: { $0.key < $1.key }) {
                try AndroidCountdownQueries.settle(stream, rows, plannedStart: plannedStart, on: connection)
            }
        }
    }

    public func settleCountdownEnds(_ stream: String, _ settlements: [AndroidCountdownQueries.Settlement], refused: [DeviceTokenQueries.Invalidation],
                                    done: [String], failed: [EndDeliveryQueries.Failure], windowSeconds: Int,
                                    holding: [EndDeliveryQueries.Hold]) async throws
        -> EndDeliveryQueries.Outcome {
        try await transaction { connection in
            try DeviceTokenQueries.clear(refused, on: connection)
            try AndroidCountdownQueries.settle(stream, settlements, on: connection)
            try EndDeliveryQueries.settled(done, stream: stream, on: connection)
            var outcome = try EndDeliveryQueries.record(failed, stream: stream, windowSeconds: windowSeconds, android: true, on: connection)
            // Released above, but for the countdowns whose `Retry-After` runs: held until it has passed.
            try EndDeliveryQueries.hold(holding, stream: stream, windowSeconds: windowSeconds, android: true, into: &outcome, on: connection)
            return outcome
        }
    }
}
