import Foundation
import Redis
import Synchronization

/// One APNs provider token for the whole fleet per key id, as Apple advises (re-signing in every worker and on
/// every restart risks `TooManyProviderTokenUpdates`). The token and its `iat` live in Redis
/// (`{namespace}:push:apns:token:<kid>`); when it is `refreshAge` old (about 40 minutes) or missing, one worker
/// signs a new one under a lock (`SET NX PX`) and the others wait for it. `ExpiredProviderToken` drops it from
/// Redis (if it is at least 20 minutes old) so the next caller re-signs. Without Redis a worker signs for itself.
public final class SharedAPNsProviderToken: AccessTokenProviding {
    private struct Cached {
        let token: String
        let issuedAt: Date
    }

    /// Deletes KEYS[1] when it still holds ARGV[1].
    static let compareAndDelete = RedisScript(name: "push.apns.cad.v1", source: """
        if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
        return 0
        """)

    private let signer: APNsProviderToken
    private let redis: RedisClient
    private let tokenKey: RedisArgument
    private let lockKey: RedisArgument
    private let waitForOther: Duration
    private let cached = Mutex<Cached?>(nil)

    /// - Parameter waitForOther: how long a worker that lost the lock waits for the winner's token before it
    ///   signs one for itself.
    public init(signer: APNsProviderToken, redis: RedisClient, namespace: String, waitForOther: Duration = .seconds(3)) {
        self.signer = signer
        self.redis = redis
        tokenKey = RedisArgument(RedisKeys(namespace: namespace).apnsToken(keyID: signer.keyID))
        lockKey = RedisArgument(RedisKeys(namespace: namespace).apnsLock(keyID: signer.keyID))
        self.waitForOther = waitForOther
    }

    public func accessToken() async throws -> String {
        let now = signer.clock()
        if let mine = cached.withLock({ $0 }), isFresh(mine, at: now) { return mine.token }
        do {
            if let shared = try await readShared(), isFresh(shared, at: now) { return remember(shared) }
            let owner = RedisArgument(UUID().uuidString)
            if try await redis.command("SET", lockKey, owner, "NX", "PX", "10000").string == "OK" {
                let issued: Cached
                if let shared = try await readShared(), isFresh(shared, at: now) {
                    issued = shared
                } else {
                    issued = Cached(token: try signer.sign(issuedAt: now), issuedAt: now)
                    let ttl = Int(APNsProviderToken.maximumAge) * 1000 - 60_000  // never handed out past Apple's hour
                    _ = try await redis.command("SET", tokenKey, RedisArgument(Self.encode(issued)), "PX", RedisArgument(ttl))
                }
                _ = try? await redis.run(script: Self.compareAndDelete, keys: [lockKey], args: [owner])
                return remember(issued)
            }
            let deadline = ContinuousClock.now + waitForOther
            while ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
                if let shared = try await readShared(), isFresh(shared, at: signer.clock()) { return remember(shared) }
            }
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            // Redis is away: a token of our own keeps pushes going.
        }
        return remember(Cached(token: try signer.sign(issuedAt: now), issuedAt: now))
    }

    public func invalidate(_ token: String) async {
        let now = signer.clock()
        cached.withLock { if $0?.token == token { $0 = nil } }
        guard let shared = try? await readShared(), shared.token == token,
              now.timeIntervalSince(shared.issuedAt) >= APNsProviderToken.minimumAge else { return }
        _ = try? await redis.run(script: Self.compareAndDelete, keys: [tokenKey], args: [RedisArgument(Self.encode(shared))])
    }

    private func isFresh(_ entry: Cached, at now: Date) -> Bool {
        now.timeIntervalSince(entry.issuedAt) < signer.refreshAge
    }

    private func remember(_ entry: Cached) -> String {
        cached.withLock { $0 = entry }
        return entry.token
    }

    private func readShared() async throws -> Cached? {
        guard let value = try await redis.command("GET", tokenKey).string, let bar = value.firstIndex(of: "|"),
              let seconds = Double(value[..<bar]) else { return nil }
        return Cached(token: String(value[value.index(after: bar)...]), issuedAt: Date(timeIntervalSince1970: seconds))
    }

    private static func encode(_ entry: Cached) -> String {
        "\(Int64(entry.issuedAt.timeIntervalSince1970))|\(entry.token)"
    }
}
