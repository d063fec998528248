import Foundation
import Testing
import TestSupport

/// A whole `CountdownSystem` run: workers started and observed, starts counted from the record file, the queue
/// and the ledger read back, a worker killed; and the variants with servers of the system's own and a fast clock.
@Suite(.serialized) struct SystemRunTests {
    @Test func chaosDeploymentDeliversEveryExpectedStartOnce() async throws {
        var options = SystemOptions()
        options.defaults = .chaos
        options.name = "h3"
        options.fakeDebug = true
        options.latencyMilliseconds = 20
        let system = try await CountdownSystem(options)
        do {
            #expect(system.startLead == 3600)
            let workers = try await system.startWorkers(2)
            let ids = try await [workers[0].workerID(), workers[1].workerID()]
            #expect(!ids[0].isEmpty && ids[0] != ids[1])
            #expect(await workers[0].metrics().keys.contains { $0.hasPrefix("countdown_") })
            #expect(workers[1].usage().map { $0.residentKB > 0 } == true)

            try await system.seedPeople(prefix: "h3p", streams: 3)
            let due = (try await system.databaseNow()).rounded(.up) + 4
            try await system.seedStreams(peoplePrefix: "h3p", streamPrefix: "h3.", count: 3, plannedAtEpoch: due + Double(system.startLead))
            let expected = try await system.expectedStarts(streamPrefix: "h3.")
            try await system.waitOutboxDrained(timeout: .seconds(30))

            let tally = PushTally(recordPath: system.fakeRecordPath)
            try await waitUntil(timeout: .seconds(60), every: .milliseconds(100), "every expected start accepted") {
                expected.isSubset(of: try tally.refresh().startKeys(prefix: "h3."))
            }
            try await waitUntil(timeout: .seconds(30), every: .milliseconds(100), "the queue to be quiet") {
                let counts = try await system.queueStats()
                return counts.claimableNow == 0 && counts.leased == 0
            }
            #expect(StartComparison.compare(expected, tally.startKeys(prefix: "h3."))
                    == StartComparison(expected: 14, accepted: 14, lost: 0, duplicated: 0, unexpected: 0))
            #expect(tally.startTimes(prefix: "h3.").allSatisfy { $0 >= due - 0.05 }, "no start before its due second")
            let ledger = try await system.ledgerCounts(streamPrefix: "h3.")
            // The seed's ineligible devices are skipped: 3 Android ones, 1 iOS one without a push-to-start token.
            #expect(ledger.byStatus == ["sent": 14, "skipped:not_ios": 3, "skipped:no_push_to_start_token": 1], "\(ledger)")
            #expect(ledger.extraAttempts == 0)
            let counts = try await system.queueStats()
            #expect(counts.dead == 0 && counts.delayed > 0, "later jobs (ends, expiry) wait: \(counts)")

            let stats = try await system.adminJSON(["stats"])
            #expect(stats is [String: Any], "\(stats)")
            await #expect(throws: CommandFailed.self) { try await system.adminJSON(["no-such-command"]) }
            #expect(try await system.fakeStats().isEmpty == false)
            try await system.clearFaults()

            workers[0].kill9()
            #expect(!workers[0].isRunning && workers[0].exitStatus == SIGKILL)
            system.retire(workers[0])
            #expect(system.workers.map(\.index) == [1] && system.retired.map(\.index) == [0])
            #expect(await system.stopWorkers() == [0])
            #expect(system.workers.isEmpty && system.retired.count == 2)
        } catch {
            await system.stop()
            throw error
        }
        await system.stop()
    }

    @Test func ownServersAndAFastClock() async throws {
        var options = SystemOptions()
        options.redis = .own
        options.postgres = .own
        options.name = "h4"
        let system = try await CountdownSystem(options)
        do {
            let redis = try #require(system.ownRedis)
            let postgres = try #require(system.ownPostgres)
            #expect(system.workerEnvironment["REDIS_URL"] == redis.url)
            #expect(system.database.url.contains(":\(postgres.port)/"))

            let fast = try system.startWorker(clockOffset: "+600s")
            try await waitUntil(timeout: .seconds(30), "the fast worker's first log line") { !fast.logLines().isEmpty }
            let stamp = try #require(fast.logLines().first?["ts"] as? String)
            let logged = try #require(ISO8601DateFormatter.withFractions.date(from: stamp) ?? ISO8601DateFormatter().date(from: stamp))
            #expect(logged.timeIntervalSinceNow > 500, "its clock runs 10 minutes ahead: \(stamp)")
            _ = try await fast.workerID()
            #expect(await system.stopWorkers() == [0])

            try await offThePool { try postgres.restart(settings: ["work_mem": "7MB"]) }
            #expect(postgres.settings["work_mem"] == "7MB" && postgres.settings["max_connections"] == "400")
            var workMem = ""
            try await waitUntil(timeout: .seconds(20), "PostgreSQL back after the restart") {
                workMem = (try? await system.query("SHOW work_mem").first?.decode("work_mem", as: String.self)) ?? ""
                return !workMem.isEmpty
            }
            #expect(workMem == "7MB")

            try await system.user("u1")
            try await system.device("d1", user: "u1")
            try system.startWorker()
            try await system.stream("s1", startsIn: 7, creator: "u1")
            try await system.waitForPushes("the start through the system's own servers") { $0.events("start").count == 1 }
        } catch {
            await system.stop()
            throw error
        }
        await system.stop()
    }
}

extension ISO8601DateFormatter {
    fileprivate static var withFractions: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}
