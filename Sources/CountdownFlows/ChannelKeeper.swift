import CountdownDomain
import CountdownStore
import Foundation
import Telemetry

/// The broadcast channels' upkeep (SPEC 12.5), one round at a time, fleet-wide one runner (`ChannelKeeperService`):
/// drops intents nobody needs, retires channels of streams long ended that no end retired, retries creations whose
/// backoff passed (or whose creator went quiet), deletes at Apple the channels past their end's dismissal time, and
/// deletes orphans: channels Apple lists that no row names (a creator crashed between Apple's answer and its record),
/// once they stayed unnamed for the grace period.
public struct ChannelKeeper: Sendable {
    /// What one round did.
    public struct Report: Sendable, Equatable {
        public var retried = 0
        public var deleted = 0
        public var orphansDeleted = 0
        public var alive = 0
    }

    let setup: BroadcastSetup
    let store: any ChannelKeeperStore
    let endDismissAfterSeconds: Int
    let logger: Logger

    public init(setup: BroadcastSetup, store: any ChannelKeeperStore, endDismissAfterSeconds: Int, logger: Logger) {
        self.setup = setup
        self.store = store
        self.endDismissAfterSeconds = endDismissAfterSeconds
        self.logger = logger
    }

    /// How long a channel Apple lists may stay unnamed before it counts as an orphan: twice the intent hold, so a
    /// creator still waiting for Apple's answer (or recording it) is never robbed.
    var orphanGraceSeconds: Double { Double(setup.holdSeconds * 2) }

    /// One round.
    public func run() async throws -> Report {
        var report = Report()
        _ = try await store.dropUnneededChannelIntents()
        _ = try await store.retireAbandonedChannels(graceSeconds: Double(endDismissAfterSeconds + 3600))
        let provisioner = ChannelProvisioner(setup: setup, logger: logger)
        for stream in try await store.channelIntentsDue(holdSeconds: setup.holdSeconds, limit: 100) where await provisioner.channel(for: stream) != nil {
            report.retried += 1
        }
        for channel in try await store.channelsDueForDeletion(limit: 500) {
            let outcome = await setup.channels.deleteChannel(channel)
            guard case .accepted = outcome else {
                logger.warn("broadcast channel could not be deleted; the next round tries again",
                            ["channel": .string(channel), "outcome": .string(outcome.result), "reason": .string(outcome.reason)])
                continue
            }
            try await store.forgetChannel(channel)
            setup.metrics.channelEvent("deleted")
            report.deleted += 1
        }
        report.orphansDeleted = try await sweepOrphans()
        report.alive = try await store.aliveChannels()
        return report
    }

    /// Lists Apple's channels and deletes the orphans among them.
    private func sweepOrphans() async throws -> Int {
        let (outcome, listed) = await setup.channels.listChannels()
        guard case .accepted = outcome else {
            logger.warn("broadcast channels could not be listed; orphans wait for the next round", ["reason": .string(outcome.reason)])
            return 0
        }
        var deleted = 0
        for orphan in try await store.orphanChannels(listed: listed, graceSeconds: orphanGraceSeconds) {
            guard case .accepted = await setup.channels.deleteChannel(orphan) else { continue }
            try await store.forgetOrphanChannel(orphan)
            setup.metrics.channelEvent("orphan")
            logger.info("orphaned broadcast channel deleted (created, never recorded)", ["channel": .string(orphan)])
            deleted += 1
        }
        return deleted
    }
}
