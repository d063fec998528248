import Redis

/// The Redis keys of one namespace. All share the hash tag `{namespace}` so scripts work on Redis Cluster.
struct QueueKeys: Sendable {
    /// Layout version; bump it together with the scripts when the stored format changes.
    static let layout = "q1"

    /// Sorted set: waiting job ids by due time (epoch ms).
    let due: RedisArgument
    /// Hash: job id → kind, NUL, payload.
    let data: RedisArgument
    /// Sorted set: leased job ids by lease expiry (epoch ms).
    let leased: RedisArgument
    /// Hash: job id → `attempts|leaseToken|lastError` (only for jobs that ran at least once).
    let state: RedisArgument
    /// Sorted set: dead job ids by when they died (epoch ms).
    let dead: RedisArgument
    /// Hash: dead job id → `attempts|deadAtMs|reason`.
    let deadInfo: RedisArgument
    /// String: counter that mints lease tokens.
    let sequence: RedisArgument
    /// Sorted set: due job ids of paused kinds held aside by `claim`, by due time (epoch ms).
    let parked: RedisArgument
    /// Hash: paused kind → `sinceMs|reason`.
    let paused: RedisArgument
    /// Pub/sub channel: published when a job becomes due earlier than anything waiting.
    let wakeChannel: RedisArgument

    init(namespace: String) {
        let key = { RedisArgument(RedisKeys(namespace: namespace).queue(Self.layout, $0)) }
        due = key("due")
        data = key("data")
        leased = key("leased")
        state = key("state")
        dead = key("dead")
        deadInfo = key("deadinfo")
        sequence = key("seq")
        wakeChannel = key("wake")
        parked = key("parked")
        paused = key("paused")
    }

    /// Every key, in the order the scripts expect them as `KEYS[1…9]`.
    var all: [RedisArgument] { [due, data, leased, state, dead, deadInfo, sequence, parked, paused] }
}
