/// A Redis deployment a system's workers and harness can reach.
public protocol RedisTarget: AnyObject, Sendable {
    /// Where the harness' own `RedisClient` connects.
    var harnessURL: String { get }
    /// What a worker is given to reach it (`REDIS_URL`, or `REDIS_SENTINELS` / `REDIS_MASTER_NAME`, ...).
    var workerEnvironment: [String: String] { get }
    func stop()
}

extension ThrowawayRedis: RedisTarget {
    public var harnessURL: String { url }
    public var workerEnvironment: [String: String] { ["REDIS_URL": url] }
}
