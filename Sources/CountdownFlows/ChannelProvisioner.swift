import BlockingIO
import CountdownDomain
import CountdownStore
import Foundation
import Telemetry

/// Finds or creates a stream's broadcast channel (SPEC 12.5). Creation at Apple is not idempotent, so the intent is
/// recorded before the call and one caller at a time holds it: a stream uses one channel, never two. A channel
/// created and then not recorded (the intent was taken over meanwhile) is deleted at once; one created by a caller
/// that crashed before recording it is an orphan, deleted by `ChannelKeeper`. A stream without a channel — still
/// being created, failed, or past `APNS_BROADCAST_MAX_CHANNELS` — goes by token pushes, and says so.
public struct ChannelProvisioner: Sendable {
    let setup: BroadcastSetup
    let logger: Logger

    /// What looking up a stream's channel found.
    enum Lookup: Equatable {
        /// The stream's usable channel.
        case channel(String)
        /// Another caller is still creating it.
        case held
        /// None (failed, at the limit, not due, or unreadable): token pushes, counted as a fallback.
        case tokens
    }

    /// The stream's usable channel id, created now if the stream has none and this caller may create it; nil: tokens
    /// (also while another caller is creating it: a start's iOS 18 devices wait for that with `lookup`).
    public func channel(for stream: String) async -> String? {
        switch await lookup(stream, waitingUpTo: .zero) {
        case .channel(let channelID):
            return channelID
        case .held:
            setup.metrics.tokenFallback(reason: "channel_pending")
            return nil
        case .tokens:
            return nil
        }
    }

    /// `channel(for:)`, telling a channel another caller is still creating (not counted as a fallback) from none. While
    /// it is held, looks again every `pollInterval` for up to `wait` first.
    func lookup(_ stream: String, waitingUpTo wait: Duration) async -> Lookup {
        var waited = Duration.zero
        while true {
            let claim = UUID().uuidString
            let answer: ChannelClaim
            do {
                answer = try await setup.store.claimChannel(stream: stream, claim: claim, maxAlive: setup.maxChannels, holdSeconds: setup.holdSeconds)
            } catch {
                logger.warn("broadcast channel could not be read; the stream's pushes go by token", ["stream": .string(stream), "error": .error(error)])
                setup.metrics.tokenFallback(reason: "store_error")
                return .tokens
            }
            switch answer {
            case .held where waited < wait:
                await setup.sleep(setup.pollInterval)
                waited += setup.pollInterval
            case .held:
                return .held
            case .ready(let channel):
                return channel.channelID.map(Lookup.channel) ?? .tokens
            case .create(let row, let claim, let attempt):
                return await create(stream: stream, row: row, claim: claim, attempt: attempt).map(Lookup.channel) ?? .tokens
            case .waiting:
                setup.metrics.tokenFallback(reason: "channel_pending")
                return .tokens
            case .failed:
                setup.metrics.tokenFallback(reason: "channel_failed")
                return .tokens
            case .atCapacity:
                logger.warn("broadcast channel limit reached; the stream's pushes go by token",
                            ["stream": .string(stream), "limit": .int(setup.maxChannels)])
                setup.metrics.tokenFallback(reason: "channel_limit")
                return .tokens
            }
        }
    }

    /// Asks Apple for the channel of the held intent and records the answer.
    private func create(stream: String, row: Int64, claim: String, attempt: Int) async -> String? {
        let outcome = await setup.channels.createChannel()
        if case .accepted(let name) = outcome, let channelID = name {
            do {
                if try await setup.store.recordChannelCreated(row: row, claim: claim, channelID: channelID) {
                    setup.metrics.channelEvent("created")
                    logger.info("broadcast channel created", ["stream": .string(stream), "channel": .string(channelID)])
                    return channelID
                }
                // Taken over while Apple answered (the other caller's channel is the stream's), or quiet so long that
                // the keeper released the claim (the channel may be an orphan being deleted): this one is nobody's.
                _ = await setup.channels.deleteChannel(channelID)
                setup.metrics.channelEvent("deleted")
            } catch {
                // Perhaps recorded after all: the keeper's orphan sweep deletes it only if no row names it.
                logger.warn("broadcast channel created but not recorded; the orphan sweep checks it",
                            ["stream": .string(stream), "channel": .string(channelID), "error": .error(error)])
            }
            setup.metrics.tokenFallback(reason: "channel_pending")
            return nil
        }
        let (retryAfter, giveUp) = Self.nextAttempt(outcome, attempt: attempt, maxAttempts: setup.maxAttempts, backoff: setup.backoff)
        do {
            try await setup.store.recordChannelFailure(row: row, claim: claim, error: outcome.reason.isEmpty ? outcome.result : outcome.reason,
                                                       retryAfterSeconds: retryAfter.timeInterval, giveUp: giveUp)
        } catch {
            logger.warn("a failed broadcast channel attempt could not be recorded", ["stream": .string(stream), "error": .error(error)])
        }
        logger.warn(giveUp ? "broadcast channel could not be created; the stream's pushes go by token for good"
                           : "broadcast channel could not be created; the stream's pushes go by token until a retry succeeds", [
            "stream": .string(stream), "attempt": .int(attempt), "outcome": .string(outcome.result), "reason": .string(outcome.reason),
            "retry_in_s": .seconds(retryAfter),
        ])
        setup.metrics.tokenFallback(reason: "channel_failed")
        return nil
    }

    /// When the next attempt may go (Apple's `Retry-After` when it gave one, else the backoff), and whether to give up:
    /// after `maxAttempts`, or at once when Apple refused for a reason a retry does not change.
    static func nextAttempt(_ outcome: Delivery, attempt: Int, maxAttempts: Int, backoff: (Int) -> Duration) -> (Duration, giveUp: Bool) {
        switch outcome {
        case .retry(let after, _): return (max(after ?? .zero, backoff(attempt)), attempt >= maxAttempts)
        case .configurationError: return (max(.seconds(60), backoff(attempt)), attempt >= maxAttempts)
        case .rejected, .tokenRefused, .accepted: return (backoff(attempt), true)
        }
    }
}
