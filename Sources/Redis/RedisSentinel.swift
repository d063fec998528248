import Foundation

/// Where the Sentinels are and which master they watch: the primary is discovered at every (re)connect.
public struct RedisSentinel: Sendable, Equatable {
    public struct Endpoint: Sendable, Equatable {
        public var host: String
        public var port: Int

        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }
    }

    /// Sentinels to ask, in order (`REDIS_SENTINELS`).
    public var sentinels: [Endpoint]
    /// The master name the Sentinels monitor (`REDIS_SENTINEL_MASTER`).
    public var masterName: String
    /// Password of the Sentinels themselves (`REDIS_SENTINEL_PASSWORD`), if they require one.
    public var password: String?

    public init(sentinels: [Endpoint], masterName: String, password: String? = nil) {
        self.sentinels = sentinels
        self.masterName = masterName
        self.password = password
    }

    /// Parses the environment values; `nil` when Sentinel is not configured. Errors name the variable.
    init?(sentinels list: String?, master: String?, password: String?) throws(RedisError) {
        guard let list else {
            if master != nil { throw RedisError(.invalidSetting, "is set but REDIS_SENTINELS is not", context: "REDIS_SENTINEL_MASTER") }
            if password != nil { throw RedisError(.invalidSetting, "is set but REDIS_SENTINELS is not", context: "REDIS_SENTINEL_PASSWORD") }
            return nil
        }
        var endpoints: [Endpoint] = []
        for item in list.split(separator: ",") {
            let entry = item.trimmingCharacters(in: .whitespaces)
            guard let colon = entry.lastIndex(of: ":"), colon != entry.startIndex,
                  let port = Int(entry[entry.index(after: colon)...]), (1...65535).contains(port) else {
                throw RedisError(.invalidSetting, "must be host:port,host:port,… (got \"\(entry)\")", context: "REDIS_SENTINELS")
            }
            var host = String(entry[..<colon])
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            endpoints.append(Endpoint(host: host, port: port))
        }
        guard !endpoints.isEmpty else { throw RedisError(.invalidSetting, "lists no sentinel", context: "REDIS_SENTINELS") }
        guard let master else { throw RedisError(.invalidSetting, "is required with REDIS_SENTINELS", context: "REDIS_SENTINEL_MASTER") }
        self.init(sentinels: endpoints, masterName: master, password: password)
    }
}
