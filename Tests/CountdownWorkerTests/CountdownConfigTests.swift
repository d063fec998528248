import Configuration
import CountdownDomain
@testable import CountdownMaintenance
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
        #expect(config.statementTimeoutMilliseconds == 30_000)
        #expect(config.lockTimeoutMilliseconds == 5_000)
        #expect(try config.postgresConfiguration().sessionSettings == ["statement_timeout": "30000", "lock_timeout": "5000", "jit": "off"])
    }

    @Test func reminderAndroidChannelIsOptionalAndChecked() throws {
        #expect(try CountdownConfig.load(from: Environment(base)).reminderAndroidChannelID == nil)
        var env = base
        env["REMINDER_ANDROID_CHANNEL_ID"] = "stream_reminders"
        #expect(try CountdownConfig.load(from: Environment(env)).reminderAndroidChannelID == "stream_reminders")
        env["REMINDER_ANDROID_CHANNEL_ID"] = "bad\u{07}id"
        #expect(throws: ConfigProblems.self) { try CountdownConfig.load(from: Environment(env)) }
        env["REMINDER_ANDROID_CHANNEL_ID"] = String(repeating: "c", count: 256)
        #expect(throws: ConfigProblems.self) { try CountdownConfig.load(from: Environment(env)) }
    }

    @Test func databaseTimeoutsAreReadAndChecked() throws {
        var env = base
        env["DATABASE_STATEMENT_TIMEOUT_MS"] = "1200"
        env["DATABASE_LOCK_TIMEOUT_MS"] = "0"
        let config = try CountdownConfig.load(from: Environment(env))
        #expect(try config.postgresConfiguration().sessionSettings == ["statement_timeout": "1200", "lock_timeout": "0", "jit": "off"])
        env["DATABASE_LOCK_TIMEOUT_MS"] = "-5"
        #expect(throws: ConfigProblems.self) { try CountdownConfig.load(from: Environment(env)) }
    }

    /// SPEC 10.1: an activity lives 8 hours, so the start window opens at most 7 hours before the planned start.
    @Test func theStartLeadIsAtMostSevenHours() throws {
        var env = base
        env["START_LEAD_SECONDS"] = "25200"
        #expect(try CountdownConfig.load(from: Environment(env)).flow.startLeadSeconds == 25_200)
        env["START_LEAD_SECONDS"] = "25201"
        do {
            _ = try CountdownConfig.load(from: Environment(env))
            Issue.record("expected a configuration problem")
        } catch let error as ConfigProblems {
            #expect(error.problems.map(\.variable) == ["START_LEAD_SECONDS"])
            #expect(error.description.contains("must be at most 25200 (7 hours)"), "\(error)")
        }
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

    /// SPEC 12.3: the retention variables, their defaults, decimals down to minutes, and refusals naming the variable.
    @Test func retentionVariables() throws {
        #expect(try CountdownConfig.load(from: Environment(base)).retention == RetentionSettings(days: 30, auditDays: 365, batchRows: 1000,
                                                                                                intervalSeconds: 300))
        var env = base
        env["RETENTION_DAYS"] = "0.002"
        env["AUDIT_RETENTION_DAYS"] = "3650"
        env["RETENTION_BATCH_ROWS"] = "50"
        env["RETENTION_INTERVAL_SECONDS"] = "5"
        let tuned = try CountdownConfig.load(from: Environment(env)).retention
        #expect(tuned == RetentionSettings(days: 0.002, auditDays: 3650, batchRows: 50, intervalSeconds: 5))
        #expect(abs(tuned.seconds - 172.8) < 0.001, "0.002 days is about 3 minutes")
        for (name, value) in [("RETENTION_DAYS", "0"), ("RETENTION_DAYS", "-1"), ("RETENTION_DAYS", "3651"), ("RETENTION_DAYS", "forever"),
                              ("RETENTION_DAYS", "inf"), ("AUDIT_RETENTION_DAYS", "0"), ("AUDIT_RETENTION_DAYS", "1e9"),
                              ("RETENTION_BATCH_ROWS", "0"), ("RETENTION_BATCH_ROWS", "-5"), ("RETENTION_BATCH_ROWS", "100001"),
                              ("RETENTION_INTERVAL_SECONDS", "0"), ("RETENTION_INTERVAL_SECONDS", "-300"), ("RETENTION_INTERVAL_SECONDS", "86401")] {
            var bad = base
            bad[name] = value
            do {
                _ = try CountdownConfig.load(from: Environment(bad))
                Issue.record("\(name)=\(value) was accepted")
            } catch let error as ConfigProblems {
                #expect(error.problems.map(\.variable) == [name], "\(name)=\(value)")
            }
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

    /// The on/off switches refuse anything else with the same message, naming the variable.
    @Test func onOffSwitchesNameTheVariableAndTheChoices() throws {
        for name in ["ANDROID_COUNTDOWN", "APNS_BROADCAST"] {
            var env = base
            env[name] = "yes"
            do {
                _ = try CountdownConfig.load(from: Environment(env))
                Issue.record("expected \(name)=yes to be refused")
            } catch let error as ConfigProblems {
                #expect(error.problems.map(\.variable) == [name])
                #expect(error.description.contains("must be one of off, on, got \"yes\""), "\(error.description)")
            }
        }
    }

    /// ANDROID_COUNTDOWN is off unless set to on; with PUSH_TRANSPORT=apns it needs the FCM credentials, as reminders do.
    @Test func androidCountdownIsOffByDefaultAndNeedsFCMBesideAPNs() throws {
        let defaults = try CountdownConfig.load(from: Environment(base))
        #expect(defaults.androidCountdown == .off)
        #expect(!defaults.flow.androidCountdownEnabled)
        var env = base
        env["ANDROID_COUNTDOWN"] = "on"
        let on = try CountdownConfig.load(from: Environment(env))
        #expect(on.androidCountdown == .on)
        #expect(on.flow.androidCountdownEnabled)
        env["ANDROID_COUNTDOWN"] = "yes"
        #expect(throws: ConfigProblems.self) { try CountdownConfig.load(from: Environment(env)) }

        env = base
        env.merge(["PUSH_TRANSPORT": "apns", "APNS_KEY_FILE": "/dev/null", "APNS_KEY_ID": "KEY", "APNS_TEAM_ID": "TEAM",
                   "APNS_BUNDLE_ID": "com.example.app", "REMINDER_TRANSPORT": "off", "ANDROID_COUNTDOWN": "on"]) { $1 }
        do {
            _ = try CountdownConfig.load(from: Environment(env))
            Issue.record("expected a missing GOOGLE_APPLICATION_CREDENTIALS")
        } catch let error as ConfigProblems {
            #expect(error.problems.map(\.variable) == ["GOOGLE_APPLICATION_CREDENTIALS"])
            #expect(error.description.contains("ANDROID_COUNTDOWN=on"))
        }
        env["GOOGLE_APPLICATION_CREDENTIALS"] = "/dev/null"
        let routed = try CountdownConfig.load(from: Environment(env))
        #expect(routed.fcm?.credentialsFile == "/dev/null", "the Android countdown goes through FCM beside APNs")
        env["ANDROID_COUNTDOWN"] = "off"
        #expect(try CountdownConfig.load(from: Environment(env)).fcm == nil, "neither reminders nor Android need FCM")
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

    @Test func thePushProxyIsReadOnceAndChecked() throws {
        var env = base
        #expect(try CountdownConfig.load(from: Environment(env)).pushProxy == .none)
        env["HTTPS_PROXY"] = "http://user:secret@proxy.internal:3128"
        env["NO_PROXY"] = "localhost"
        let config = try CountdownConfig.load(from: Environment(env))
        #expect(config.pushProxy.https == "http://user:secret@proxy.internal:3128")
        #expect(config.pushProxy.noProxy == "localhost")
        #expect(!config.pushProxy.summary.contains("secret"))
        env["HTTPS_PROXY"] = "ftp://user:secret@proxy.internal:21"
        #expect(try CountdownConfig.load(from: Environment(env)).pushProxy.https != nil, "countdown-admin does not check the proxy")
        env["SHUTDOWN_GRACE_SECONDS"] = "-1"
        do {
            _ = try CountdownConfig.loadForWorker(from: Environment(env))
            Issue.record("expected a configuration problem")
        } catch let error as ConfigProblems {
            #expect(error.problems.map(\.variable) == ["SHUTDOWN_GRACE_SECONDS", "HTTPS_PROXY"], "every problem at once")
            #expect(!error.description.contains("secret"), "never echo credentials")
        }
    }
}
