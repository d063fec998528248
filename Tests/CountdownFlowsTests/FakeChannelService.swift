import BlockingIO
import CountdownDomain
import CountdownFlows
import Foundation
import PushPayloads

/// Apple's channel API in memory: channels created, deleted and listed, broadcasts recorded; `createAnswer` and
/// `broadcastAnswer` make it refuse. Creation waits `createDelay`, so concurrent callers overlap.
final class FakeChannelService: ChannelService {
    struct Broadcast: Sendable {
        var channel: String
        var event: LiveActivityEvent
        var headers: [String: String]
    }

    struct State: Sendable {
        var alive: Set<String> = []
        var created = 0
        var deleted: [String] = []
        var broadcasts: [Broadcast] = []
        var createAnswer: Delivery?
        var broadcastAnswer: Delivery?
    }

    let state = Locked(State())
    let createDelay: Duration

    init(createDelay: Duration = .milliseconds(20)) { self.createDelay = createDelay }

    func createChannel() async -> Delivery {
        try? await Task.sleep(for: createDelay)
        return state.withLock { state in
            if let refusal = state.createAnswer { return refusal }
            state.created += 1
            let id = "ch-\(state.created)"
            state.alive.insert(id)
            return .accepted(name: id)
        }
    }

    func deleteChannel(_ channelID: String) async -> Delivery {
        state.withLock { state in
            state.alive.remove(channelID)
            state.deleted.append(channelID)
            return .accepted(name: channelID)
        }
    }

    func listChannels() async -> (outcome: Delivery, channels: [String]) {
        (.accepted(name: nil), state.withLock { Array($0.alive).sorted() })
    }

    func broadcast(_ payload: LiveActivityPayload, on channelID: String) async -> Delivery {
        state.withLock { state in
            if let refusal = state.broadcastAnswer { return refusal }
            guard state.alive.contains(channelID) else { return .rejected(reason: "BadChannelId") }
            state.broadcasts.append(Broadcast(channel: channelID, event: payload.event, headers: payload.apnsHeaders))
            return .accepted(name: nil)
        }
    }
}

/// Counts what the broadcast flows report.
final class CountingBroadcastMetrics: BroadcastMetrics {
    let counts = Locked([String: Int]())

    func endRequests(path: String, count: Int) { counts.withLock { $0["end:\(path)", default: 0] += count } }
    func tokenFallback(reason: String) { counts.withLock { $0["fallback:\(reason)", default: 0] += 1 } }
    func channelEvent(_ event: String) { counts.withLock { $0["event:\(event)", default: 0] += 1 } }
    subscript(key: String) -> Int { counts.value[key] ?? 0 }
}
