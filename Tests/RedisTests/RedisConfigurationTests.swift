import Testing

@testable import Redis

@Suite struct RedisConfigurationTests {
    @Test func parsesHostPortAndDefaults() throws {
        let configuration = try RedisConfiguration(url: "redis://127.0.0.1:6390")
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 6390)
        #expect(configuration.database == 0)
        #expect(configuration.password == nil)
        #expect(configuration.username == nil)
        #expect(try RedisConfiguration(url: "redis://cache").port == 6379)
    }

    @Test func parsesPasswordUserAndDatabase() throws {
        let onlyPassword = try RedisConfiguration(url: "redis://:s3cr%40t@redis.internal:6380/3")
        #expect(onlyPassword.password == "s3cr@t")
        #expect(onlyPassword.username == nil)
        #expect(onlyPassword.database == 3)
        let withUser = try RedisConfiguration(url: "redis://worker:pw@localhost/2")
        #expect(withUser.username == "worker")
        #expect(withUser.password == "pw")
        #expect(withUser.database == 2)
    }

    @Test(arguments: [
        "http://localhost:6379", "redis://", "redis://localhost:99999", "redis://localhost/abc", "redis://localhost/-1",
        "not a url at all", "redis://user@localhost",
    ])
    func rejectsBadURLs(url: String) {
        #expect { try RedisConfiguration(url: url) } throws: { ($0 as? RedisError)?.code == .invalidURL }
    }

    @Test func errorsNeverShowThePassword() {
        do {
            _ = try RedisConfiguration(url: "redis://:hunter2@localhost/x")
            Issue.record("expected an error")
        } catch {
            #expect(!"\(error)".contains("hunter2"))
        }
        let configuration = try? RedisConfiguration(url: "redis://:hunter2@localhost/1")
        #expect(configuration?.redactedDescription == "localhost:6379/1")
    }
}
