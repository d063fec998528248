import CountdownDomain
import CountdownStore
import Foundation
import Telemetry

/// The broadcast channels of one start fan-out (`APNS_BROADCAST=on`, SPEC 12.5): each stream's channel, found or
/// created once for the fan-out (concurrently across its streams), and per page the devices whose start carries it
/// (`input-push-channel`): those whose app reported iOS 18 or later. Every other device, and every device of a
/// stream without a channel, gets `input-push-token` as before.
struct StartChannels: Sendable {
    /// Channel id by stream.
    var byStream: [String: String] = [:]
    /// Streams whose channel another caller was creating when the fan-out began: their iOS 18 devices wait for it
    /// (`awaitPending`) while every other device's start goes at once.
    var pending: Set<String> = []

    /// The channels of `plans`' streams; none when broadcast is off.
    static func channels(of plans: [String: StartPlan], context: FlowContext) async -> StartChannels {
        var found = StartChannels()
        if let setup = context.broadcast { await found.look(Set(plans.keys), waitingUpTo: .zero, setup: setup, logger: context.logger) }
        return found
    }

    /// Waits (up to `BroadcastSetup.startWait`) for the pending streams' channels; a stream whose channel is still not
    /// there, failed or hit the limit goes by token from now on.
    mutating func awaitPending(context: FlowContext) async {
        guard let setup = context.broadcast, !pending.isEmpty else { return }
        let streams = pending
        pending = []
        await look(streams, waitingUpTo: setup.startWait, setup: setup, logger: context.logger)
        for stream in pending {
            context.logger.warn("broadcast channel still being created; the stream's iOS 18 starts go by token",
                                ["stream": .string(stream), "waited_s": .seconds(setup.startWait)])
            setup.metrics.tokenFallback(reason: "channel_pending")
        }
        pending = []
    }

    /// Looks up `streams`' channels at once (each waiting up to `wait` while another caller creates it): the channels
    /// found go into `byStream`, the streams whose channel is still being created into `pending`.
    private mutating func look(_ streams: Set<String>, waitingUpTo wait: Duration, setup: BroadcastSetup, logger: Logger) async {
        let provisioner = ChannelProvisioner(setup: setup, logger: logger)
        await withTaskGroup(of: (String, ChannelProvisioner.Lookup).self) { group in
            for stream in streams { group.addTask { (stream, await provisioner.lookup(stream, waitingUpTo: wait)) } }
            for await (stream, lookup) in group {
                switch lookup {
                case .channel(let channelID): byStream[stream] = channelID
                case .held: pending.insert(stream)
                case .tokens: break
                }
            }
        }
    }

    /// Of `page`'s claimed Apple devices whose stream has or awaits a channel, those whose app reported iOS 18 or
    /// later: read once per page, for `waitingForChannel` and `devicesOnChannel`; none when that cannot be read (tokens).
    func modernDevices(in page: [String: StartPlan], context: FlowContext) async -> Set<String> {
        guard let setup = context.broadcast else { return [] }
        let keys = Self.appleKeys(page.filter { pending.contains($0.key) || byStream[$0.key] != nil })
        guard !keys.isEmpty else { return [] }
        do {
            return try await setup.store.devices(Array(Set(keys.map(\.device))), reportingAtLeast: BroadcastSetup.channelOSMajor)
        } catch {
            context.logger.warn("device OS versions could not be read; this page's starts go by token", ["error": .error(error)])
            return []
        }
    }

    /// The claimed iOS 18+ devices (`modern`) of `page` whose stream's channel is pending: their starts wait for
    /// `awaitPending`.
    func waitingForChannel(_ page: [String: StartPlan], modern: Set<String>) -> Set<StartLedger.Key> {
        Set(Self.appleKeys(page.filter { pending.contains($0.key) }).filter { modern.contains($0.device) })
    }

    /// `page` as the rows that go now and the `waiting` ones, sent once the channel is there (streams with none left out).
    static func split(_ page: [String: StartPlan], waiting: Set<StartLedger.Key>) -> (now: [String: StartPlan], later: [String: StartPlan]) {
        var now: [String: StartPlan] = [:]
        var later: [String: StartPlan] = [:]
        for (stream, plan) in page {
            let (wait, go) = (plan.claimed.filter { waiting.contains($0.key) }, plan.claimed.filter { !waiting.contains($0.key) })
            if !go.isEmpty { now[stream] = plan; now[stream]?.claimed = go }
            if !wait.isEmpty { later[stream] = plan; later[stream]?.claimed = wait }
        }
        return (now, later)
    }

    /// The claimed rows of `page`'s Apple devices.
    static func appleKeys(_ page: [String: StartPlan]) -> [StartLedger.Key] {
        page.flatMap { _, plan in plan.claimed.map(\.key).filter { plan.targets[$0]?.candidate.isAndroid != true } }
    }

    /// The channel each claimed iOS 18+ device's start carries; its stream's channel is recorded as used (what its
    /// activities show: the planned start, unless a broadcast already went). `modern`: `modernDevices(in:)` of the page.
    func devicesOnChannel(_ page: [String: StartPlan], modern: Set<String>, context: FlowContext) async -> [StartLedger.Key: String] {
        guard let setup = context.broadcast, !byStream.isEmpty else { return [:] }
        var onChannel: [StartLedger.Key: String] = [:]
        for key in Self.appleKeys(page.filter { byStream[$0.key] != nil }) where modern.contains(key.device) { onChannel[key] = byStream[key.stream] }
        for stream in Set(onChannel.keys.map(\.stream)) {
            guard let channel = byStream[stream], let planned = page[stream]?.stream.snapshot.plannedStartAt else { continue }
            do {
                try await setup.store.markChannelUsed(channel, shown: planned, replacing: false)
            } catch {
                context.logger.warn("channel use could not be recorded", ["stream": .string(stream), "error": .error(error)])
            }
        }
        return onChannel
    }
}
