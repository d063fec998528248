import Testing

@testable import Redis

/// `RedisConfiguration(url:environment:)`: TLS and Sentinel settings, each error naming its variable.
@Suite struct RedisSettingsTests {
    @Test func redissTurnsOnTLSWithTheSettings() throws {
        let plain = try RedisConfiguration(url: "redis://cache:6379", environment: [:])
        #expect(plain.tls == nil)
        let system = try RedisConfiguration(url: "rediss://worker:pw@cache.example.com:6380/1", environment: [:])
        #expect(system.tls == RedisTLS())
        #expect(system.username == "worker" && system.port == 6380)
        let named = try RedisConfiguration(url: "rediss://10.0.0.5", environment: [
            "REDIS_TLS_CA_FILE": "/etc/hostname", "REDIS_TLS_SERVER_NAME": "cache.internal",
        ])
        #expect(named.tls == RedisTLS(caFile: "/etc/hostname", serverName: "cache.internal"))
    }

    @Test(arguments: [
        ("redis://cache", ["REDIS_TLS_CA_FILE": "/etc/hostname"], "REDIS_TLS_CA_FILE"),
        ("rediss://cache", ["REDIS_TLS_CA_FILE": "/nonexistent/ca.pem"], "REDIS_TLS_CA_FILE"),
        ("rediss://cache", ["REDIS_TLS_CERT_FILE": "/etc/hostname"], "REDIS_TLS_KEY_FILE"),
        ("redis://cache", ["REDIS_SENTINELS": "s1:26379"], "REDIS_SENTINEL_MASTER"),
        ("redis://cache", ["REDIS_SENTINELS": "s1", "REDIS_SENTINEL_MASTER": "main"], "REDIS_SENTINELS"),
        ("redis://cache", ["REDIS_SENTINEL_MASTER": "main"], "REDIS_SENTINEL_MASTER"),
    ])
    func badSettingsNameTheirVariable(url: String, settings: [String: String], variable: String) {
        #expect { try RedisConfiguration(url: url, environment: settings) } throws: { error in
            guard let error = error as? RedisError else { return false }
            return error.code == .invalidSetting && error.context == variable
        }
    }

    @Test func sentinelListAndMaster() throws {
        let configuration = try RedisConfiguration(url: "redis://:pw@ignored/2", environment: [
            "REDIS_SENTINELS": "s1:26379, [::1]:26380", "REDIS_SENTINEL_MASTER": "main", "REDIS_SENTINEL_PASSWORD": "spw",
        ])
        #expect(configuration.sentinel == RedisSentinel(
            sentinels: [.init(host: "s1", port: 26379), .init(host: "::1", port: 26380)], masterName: "main", password: "spw"))
        #expect(configuration.database == 2 && configuration.password == "pw")
        #expect(configuration.redactedDescription == "sentinel:main/2")
    }
}
