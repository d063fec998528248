import BlockingIO

/// A token bucket per key (a user id, a client IP): `perMinute` requests a minute with bursts of up to
/// `burst`. In memory and per process (with several replicas each enforces its own share). Bounded: buckets
/// that are full again are dropped when the table reaches `maxKeys`, and if that frees less than a quarter
/// the least recently used half goes.
final class KeyedRateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    let perMinute: Int
    let burst: Int
    let maxKeys: Int
    private let now: @Sendable () -> ContinuousClock.Instant
    private let buckets = Locked([String: Bucket]())

    init(perMinute: Int, burst: Int, maxKeys: Int = 100_000, now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        precondition(perMinute > 0 && burst > 0 && maxKeys > 0)
        self.perMinute = perMinute
        self.burst = burst
        self.maxKeys = maxKeys
        self.now = now
    }

    /// Takes one token for `key`: nil when allowed, otherwise how long until a token is back.
    func acquire(_ key: String) -> Duration? {
        let instant = now()
        let rate = Double(perMinute) / 60  // tokens per second
        return buckets.withLock { buckets -> Duration? in
            if buckets.count >= maxKeys, buckets[key] == nil { prune(&buckets, at: instant, rate: rate) }
            var bucket = buckets[key] ?? Bucket(tokens: Double(burst), updated: instant)
            let elapsed = bucket.updated.duration(to: instant).timeInterval
            bucket.tokens = min(Double(burst), bucket.tokens + max(0, elapsed) * rate)
            bucket.updated = instant
            defer { buckets[key] = bucket }
            guard bucket.tokens >= 1 else { return .seconds((1 - bucket.tokens) / rate) }
            bucket.tokens -= 1
            return nil
        }
    }

    var keys: Int { buckets.withLock { $0.count } }

    private func prune(_ buckets: inout [String: Bucket], at instant: ContinuousClock.Instant, rate: Double) {
        let full = Double(burst)
        buckets = buckets.filter { $0.value.tokens + $0.value.updated.duration(to: instant).timeInterval * rate < full }
        guard buckets.count >= maxKeys * 3 / 4 else { return }  // freed a quarter at least: the next prune is far
        let newest = buckets.sorted { $0.value.updated > $1.value.updated }.prefix(maxKeys / 2)
        buckets = Dictionary(uniqueKeysWithValues: newest.map { ($0.key, $0.value) })
    }
}
