import Configuration
import CountdownDomain
@testable import CountdownWorker
import Foundation
import Testing

@Suite struct CountdownConfigTests {
    let base = ["DATABASE_URL": "postgres://u:p@localhost:5432/db", "REDIS_URL": "redis://localhost:6379/0", "PUSH_TRANSPORT": "log"]

    @Test func defaultsFollowTheSpec() throws {
        let config = try CountdownConfig.load(from: Environment(base))
        #expect(config.namespace == "countdown")
        #expect(config.flow == FlowSettings())
        #expect(config.httpAddress == "0.0.0.0:9090")
        #expect(config.shutdownGraceSeconds == 25)
        #expect(config.logger.format == .json)
        #expect(config.logger.level == .info)
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

    @Test func badLogSettingsAreNamedWithTheOtherProblems() {
        var env = base
        env["LOG_LEVEL"] = "loud"
        env["WORKER_CONCURRENCY"] = "0"
        do {
            _ = try CountdownConfig.load(from: Environment(env))
            Issue.record("expected configuration problems")
        } catch let error as ConfigProblems {
            #expect(Set(error.problems.map(\.variable)) == ["LOG_LEVEL", "WORKER_CONCURRENCY"])
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
}
