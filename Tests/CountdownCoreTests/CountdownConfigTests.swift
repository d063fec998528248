import Foundation
import Testing
@testable import CountdownCore

@Suite struct CountdownConfigTests {
    let base = ["DATABASE_URL": "postgres://u:p@localhost:5432/db", "REDIS_URL": "redis://localhost:6379/0", "PUSH_TRANSPORT": "log"]

    @Test func defaultsFollowTheSpec() throws {
        let config = try CountdownConfig.load(from: Environment(base))
        #expect(config.namespace == "countdown")
        #expect(config.flow == FlowSettings())
        #expect(config.httpAddress == "0.0.0.0:9090")
        #expect(config.shutdownGraceSeconds == 25)
        #expect(config.logFormat == .json)
        #expect(config.startBatchSize == 32)
    }

    @Test func everyProblemIsNamedOnItsOwnLine() {
        var env = base
        env["DATABASE_URL"] = nil
        env["REDIS_URL"] = "http://nope"
        env["START_LEAD_SECONDS"] = "soon"
        env["PUSH_TRANSPORT"] = "pigeon"
        do {
            _ = try CountdownConfig.load(from: Environment(env))
            Issue.record("expected configuration problems")
        } catch let error as ConfigProblems {
            let variables = error.problems.map(\.variable)
            #expect(variables == ["DATABASE_URL", "REDIS_URL", "PUSH_TRANSPORT", "START_LEAD_SECONDS"])
            #expect(error.description.split(separator: "\n").count == 4)
            #expect(!error.description.contains("u:p"), "never echo credentials")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func fcmNeedsAReadableCredentialsFile() {
        var env = base
        env["PUSH_TRANSPORT"] = "fcm"
        env["GOOGLE_APPLICATION_CREDENTIALS"] = "/nonexistent/sa.json"
        #expect(throws: ConfigProblems.self) { try CountdownConfig.load(from: Environment(env)) }
    }

    @Test func rangesAndSchemesAreChecked() {
        for (name, value) in [("WORKER_CONCURRENCY", "0"), ("START_BATCH_SIZE", "0"), ("START_BATCH_SIZE", "257"), ("HTTP_ADDR", "9090"), ("DEEP_LINK_SCHEME", "all mine"), ("COUNTDOWN_NAMESPACE", "a{b}")] {
            var env = base
            env[name] = value
            #expect(throws: ConfigProblems.self, "\(name)=\(value)") { try CountdownConfig.load(from: Environment(env)) }
        }
    }

    @Test func redisTLSSentinelAndPoolSettings() throws {
        var env = base
        env["REDIS_URL"] = "rediss://worker:pw@cache.example.com:6380/2"
        env["REDIS_TLS_SERVER_NAME"] = "cache.internal"
        env["DATABASE_POOL_SIZE"] = "12"
        let config = try CountdownConfig.load(from: Environment(env))
        #expect(config.redis.tls?.serverName == "cache.internal")
        #expect(config.redis.username == "worker" && config.redis.port == 6380 && config.redis.database == 2)
        #expect(config.databasePoolSize == 12)
        #expect(try CountdownConfig.load(from: Environment(base)).databasePoolSize == 32)
    }

    @Test func redisSettingProblemsNameTheirVariable() {
        for (name, value, variable) in [
            ("REDIS_TLS_CA_FILE", "/nonexistent/ca.pem", "REDIS_TLS_CA_FILE"),
            ("REDIS_SENTINELS", "sentinel-0", "REDIS_SENTINELS"),
            ("DATABASE_POOL_SIZE", "0", "DATABASE_POOL_SIZE"),
        ] {
            var env = base
            env["REDIS_URL"] = "rediss://cache:6380"
            env[name] = value
            if name == "REDIS_SENTINELS" { env["REDIS_SENTINEL_MASTER"] = "main" }
            do {
                _ = try CountdownConfig.load(from: Environment(env))
                Issue.record("expected a problem with \(name)")
            } catch let error as ConfigProblems {
                #expect(error.problems.map(\.variable) == [variable], "\(error)")
                #expect(!error.description.contains("\n"))
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
    }
}
