import CountdownDomain
import CountdownStore
import Foundation

/// The broadcast channels of one start fan-out (`APNS_BROADCAST=on`, SPEC 12.5): each stream's channel, found or
/// created once for the fan-out (concurrently across its streams), and per page the devices whose start carries it
/// (`input-push-channel`): those whose app reported iOS 18 or later. Every other device, and every device of a
/// stream without a channel, gets `input-push-token` as before.
struct StartChannels: Sendable {
    /// Channel id by stream.
    var byStream: [String: String] = [:]

    /// The channels of `plans`' streams; none when broadcast is off.
    static func channels(of plans: [String: StartPlan], context: FlowContext) async -> StartChannels {
        guard let setup = context.broadcast else { return StartChannels() }
        let provisioner = ChannelProvisioner(setup: setup, logger: context.logger)
        var found = StartChannels()
        await withTaskGroup(of: (String, String?).self) { group in
            for stream in plans.keys { group.addTask { (stream, await provisioner.channel(for: stream)) } }
            for await (stream, channel) in group { found.byStream[stream] = channel }
        }
        return found
    }

    /// The channel each claimed iOS 18+ device's start carries; its stream's channel is recorded as used (what its
    /// activities show: the planned start, unless a broadcast already went).
    func devicesOnChannel(_ page: [String: StartPlan], context: FlowContext) async -> [StartLedger.Key: String] {
        guard let setup = context.broadcast, !byStream.isEmpty else { return [:] }
        let keys = page.filter { byStream[$0.key] != nil }.flatMap { _, plan in
            plan.claimed.map(\.key).filter { plan.targets[$0]?.candidate.isAndroid != true }
        }
        guard !keys.isEmpty else { return [:] }
        let modern: Set<String>
        do {
            modern = try await setup.store.devices(Array(Set(keys.map(\.device))), reportingAtLeast: BroadcastSetup.channelOSMajor)
        } catch {
            context.logger.warn("device OS versions could not be read; this page's starts go by token", ["error": .error(error)])
            return [:]
        }
        var onChannel: [StartLedger.Key: String] = [:]
        for key in keys where modern.contains(key.device) { onChannel[key] = byStream[key.stream] }
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
