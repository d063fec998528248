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

    @Test func pushSafetyVariables() throws {
        let defaults = try CountdownConfig.load(from: Environment(base))
        #expect(defaults.tokenGuardMinRefusals == 20)
        #expect(defaults.tokenGuardRatio == 0.2)
        #expect(defaults.reminderTransport == .fcm)
        #expect(defaults.flow.remindersEnabled)
        var env = base
        env["TOKEN_GUARD_MIN_REFUSALS"] = "50"
        env["TOKEN_GUARD_RATIO"] = "0.5"
        env["REMINDER_TRANSPORT"] = "off"
        let tuned = try CountdownConfig.load(from: Environment(env))
        #expect(tuned.tokenGuardMinRefusals == 50)
        #expect(tuned.tokenGuardRatio == 0.5)
        #expect(!tuned.flow.remindersEnabled)
        for (name, value) in [("TOKEN_GUARD_MIN_REFUSALS", "0"), ("TOKEN_GUARD_RATIO", "1.5"), ("TOKEN_GUARD_RATIO", "lots"),
                              ("REMINDER_TRANSPORT", "apns"), ("END_DISMISS_AFTER_SECONDS", "14401")] {
            var bad = base
            bad[name] = value
            #expect(throws: ConfigProblems.self, "\(name)=\(value)") { try CountdownConfig.load(from: Environment(bad)) }
        }
        env = base
        env["END_DISMISS_AFTER_SECONDS"] = "14400"
        #expect(try CountdownConfig.load(from: Environment(env)).flow.endDismissAfterSeconds == 14400)
    }

    /// With PUSH_TRANSPORT=apns, reminders need FCM credentials unless REMINDER_TRANSPORT=off.
    @Test func apnsWithRemindersNeedsFCMCredentialsOrOff() throws {
        var env = base
        env.merge(["PUSH_TRANSPORT": "apns", "APNS_KEY_FILE": "/dev/null", "APNS_KEY_ID": "KEY", "APNS_TEAM_ID": "TEAM",
                   "APNS_BUNDLE_ID": "com.example.app"]) { $1 }
        do {
            _ = try CountdownConfig.load(from: Environment(env))
            Issue.record("expected a missing GOOGLE_APPLICATION_CREDENTIALS")
        } catch let error as ConfigProblems {
            #expect(error.problems.map(\.variable) == ["GOOGLE_APPLICATION_CREDENTIALS"])
            #expect(error.description.contains("REMINDER_TRANSPORT=off"))
        }
        env["REMINDER_TRANSPORT"] = "off"
        let config = try CountdownConfig.load(from: Environment(env))
        #expect(config.fcm == nil)
        #expect(!config.flow.remindersEnabled)
    }
}
