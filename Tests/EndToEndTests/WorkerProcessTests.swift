import CountdownDomain
import CountdownStore
import CountdownWorker
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Redis
import Telemetry
import Testing
import TestSupport

/// The process itself: configuration errors, health endpoints, the metrics contract with deploy/, SIGTERM.
@Suite(.serialized) struct WorkerProcessTests {
    func httpAddress(of worker: SystemWorker) async throws -> String {
        var address = ""
        try await waitUntil(timeout: .seconds(10), "the worker to announce its HTTP address") {
            for line in worker.log.split(separator: "\n") where line.contains("serving health and metrics") {
                if let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], let value = object["address"] as? String {
                    address = value
                    return true
                }
            }
            return false
        }
        return address
    }

    func get(_ url: String) async throws -> (status: Int, body: String) {
        let (data, response) = try await URLSession.shared.data(from: URL(string: url)!)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    @Test func healthReadinessMetricsAndGracefulStop() async throws {
        let system = try await CountdownSystem()
        let worker = try system.startWorker()
        let base = "http://" + (try await httpAddress(of: worker))
        #expect(try await get(base + "/healthz").status == 200)
        try await waitUntil(timeout: .seconds(10), "ready") { try await get(base + "/readyz").status == 200 }
        let metrics = try await get(base + "/metrics")
        #expect(metrics.status == 200)
        // Every metric deploy/ relies on (dashboard, alerts, autoscaler) is exported by a real worker.
        let contract = try String(contentsOf: FakeFCMProcess.repositoryRoot.appendingPathComponent("deploy/metrics.txt"), encoding: .utf8)
        // countdown_api_* are the API's (APIProcessTests).
        let families = Set(contract.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.isEmpty && !$0.hasPrefix("countdown_api_") }.map { line -> String in
            var name = String(line.prefix { $0 != "{" })
            for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) { name = String(name.dropLast(suffix.count)) }
            return name
        })
        #expect(!families.isEmpty)
        for family in families {
            #expect(metrics.body.contains("# TYPE \(family) "), "deploy/metrics.txt lists \(family) but the worker does not export it")
        }
        #expect(metrics.body.contains("countdown_build_info{version=\"\(BuildInfo.version)\"} 1"))
        let first = worker.log.split(separator: "\n").first.map(String.init) ?? ""
        #expect(first.contains("worker starting") && first.contains("\"version\":\"\(BuildInfo.version)\""), "the first log line: \(first)")
        worker.terminate()
        #expect(await worker.waitForExit(timeout: 10) == 0, "SIGTERM drains and exits 0")
        #expect(worker.log.contains("worker stopped"))
        await system.stop()
    }

    @Test func badConfigurationStopsAtStartWithOneLinePerProblem() async throws {
        let system = try await CountdownSystem()
        let worker = try system.startWorker(["DATABASE_URL": "mysql://nope", "WORKER_CONCURRENCY": "many", "PUSH_TRANSPORT": "pigeon"])
        #expect(await worker.waitForExit(timeout: 10) == 2)
        let lines = worker.log.split(separator: "\n")
        #expect(lines.count == 3, "\(worker.log)")
        #expect(lines.contains { $0.contains("DATABASE_URL") } && lines.contains { $0.contains("WORKER_CONCURRENCY") }
                && lines.contains { $0.contains("PUSH_TRANSPORT") })
        await system.stop()
    }

    @Test func unreadableServiceAccountIsAClearStartError() async throws {
        let system = try await CountdownSystem()
        let path = (TestEnvironment.scratchDirectory as NSString).appendingPathComponent(TestEnvironment.uniqueName("bad") + ".json")
        try Data(#"{"type": "service_account", "project_id": "p"}"#.utf8).write(to: URL(fileURLWithPath: path))
        let worker = try system.startWorker(["GOOGLE_APPLICATION_CREDENTIALS": path])
        #expect(await worker.waitForExit(timeout: 10) == 1)
        #expect(worker.log.contains(path), "the error names the file: \(worker.log)")
        #expect(!worker.log.contains("BEGIN PRIVATE KEY"))
        await system.stop()
    }

    @Test func redisSettingMistakesAreNamedAtStart() async throws {
        let system = try await CountdownSystem()
        for (settings, variable) in [
            (["REDIS_TLS_CA_FILE": "/etc/hostname"], "REDIS_TLS_CA_FILE"),
            (["REDIS_SENTINELS": "sentinel-0:26379"], "REDIS_SENTINEL_MASTER"),
        ] {
            let worker = try system.startWorker(settings)
            #expect(await worker.waitForExit(timeout: 10) == 2)
            #expect(worker.log.split(separator: "\n").count == 1 && worker.log.contains(variable), "\(worker.log)")
        }
        await system.stop()
    }

    /// What the first connection finds wrong with the settings stops the worker at once, with exit code 2 and one
    /// line naming the variable: an untrusted certificate, refused credentials.
    @Test func redisMisconfigurationFoundByTheFirstConnectionStopsTheWorker() async throws {
        let system = try await CountdownSystem()
        let certificates = try TestCertificates()
        let server = try await ThrowawayRedis.startTLS(certificates)
        let guarded = try await ThrowawayRedis.start(extraArguments: ["--requirepass", "right"])
        for (settings, variable) in [
            (["REDIS_URL": server.tlsURL(), "REDIS_TLS_CA_FILE": certificates.otherCAFile], "REDIS_TLS_CA_FILE"),
            (["REDIS_URL": "redis://:pw-not-this@127.0.0.1:\(guarded.port)/0"], "REDIS_URL"),
            (["REDIS_URL": guarded.url], "REDIS_URL"),
        ] {
            let worker = try system.startWorker(settings.merging(["REDIS_STARTUP_WAIT_SECONDS": "60"]) { $1 })
            #expect(await worker.waitForExit(timeout: 15) == 2, "\(settings)")
            let lines = worker.log.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].contains("check \(variable)") && lines[0].contains("\"variable\":\"\(variable)\""),
                    "\(worker.log)")
            #expect(!worker.log.contains("pw-not-this"), "no password in the log")
        }
        await server.stopInBackground()
        await guarded.stopInBackground()
        await system.stop()
    }

    /// Redis that is not there yet is waited for (`REDIS_STARTUP_WAIT_SECONDS`), then the worker starts as usual;
    /// when it never comes, the worker exits 1 naming where it looked.
    @Test func unreachableRedisAtStartIsWaitedForThenNamed() async throws {
        let system = try await CountdownSystem()
        // The worker's Redis address is a port this test holds from start to end: nobody answers on it until the
        // server is up, then it relays to the server. (A port freed and started on again could be taken meanwhile
        // by anything else on the machine, and the worker would reach that instead, or the server fail to bind.)
        let late = try ClosingListener()
        defer { late.release() }
        let waiting = try system.startWorker(["REDIS_URL": "redis://127.0.0.1:\(late.port)/0", "REDIS_STARTUP_WAIT_SECONDS": "60"])
        try await waitUntil(timeout: .seconds(30), "the worker to say it is waiting for Redis; its log: \(waiting.log)") {
            waiting.log.contains("Redis not reachable at start; trying again")
        }
        #expect(!waiting.log.contains("worker starting"), "nothing starts before Redis answers: \(waiting.log)")
        let redis = try await ThrowawayRedis.start()
        late.forward(to: redis.port)
        let base = "http://" + (try await httpAddress(of: waiting))
        try await waitUntil(timeout: .seconds(15), "ready once Redis is there") { try await get(base + "/readyz").status == 200 }
        #expect(waiting.log.contains("Redis reached"))

        let refusing = [RefusingPort(), RefusingPort(), RefusingPort()]
        defer { refusing.forEach { $0.release() } }
        for (settings, variable) in [
            (["REDIS_URL": "redis://\(refusing[0].address)/0"], "REDIS_URL"),
            (["REDIS_SENTINELS": "\(refusing[1].address),\(refusing[2].address)", "REDIS_SENTINEL_MASTER": "main"],
             "REDIS_SENTINELS"),
        ] {
            let worker = try system.startWorker(settings.merging(["REDIS_STARTUP_WAIT_SECONDS": "2"]) { $1 })
            #expect(await worker.waitForExit(timeout: 20) == 1, "\(settings)")
            let last = worker.log.split(separator: "\n").last.map(String.init) ?? ""
            #expect(last.contains("check \(variable)") && last.contains("Redis not reachable for"), "\(worker.log)")
            #expect(worker.log.contains("trying again"), "it tried more than once: \(worker.log)")
        }
        waiting.terminate()
        _ = await waiting.waitForExit(timeout: 10)
        late.release()
        await redis.stopInBackground()
        await system.stop()
    }

    /// A SIGTERM while the worker waits for Redis at start ends the wait at once with exit code 0, as a stop while
    /// running does (an orchestrator stopping a pod whose Redis is away sees a clean exit, not a kill).
    @Test func stopDuringTheRedisStartupWaitIsGraceful() async throws {
        let system = try await CountdownSystem()
        let holder = try ClosingListener()
        let worker = try system.startWorker(["REDIS_URL": "redis://127.0.0.1:\(holder.port)/0", "REDIS_STARTUP_WAIT_SECONDS": "120"])
        try await waitUntil(timeout: .seconds(30), "the worker to say it is waiting for Redis; its log: \(worker.log)") {
            worker.log.contains("Redis not reachable at start; trying again")
        }
        worker.terminate()
        #expect(await worker.waitForExit(timeout: 15) == 0, "\(worker.log)")
        #expect(worker.log.contains("shutting down") && worker.log.contains("worker stopped before Redis answered"), "\(worker.log)")
        #expect(!worker.log.contains("worker starting"), "\(worker.log)")
        holder.release()
        await system.stop()
    }

    /// A misconfiguration that appears after start (here the password changed under a running worker) keeps the
    /// worker running and shows in /readyz, naming the variable.
    @Test func readinessNamesTheRedisSettingWhenItGoesWrongLater() async throws {
        let system = try await CountdownSystem()
        let server = try await ThrowawayRedis.start(extraArguments: ["--requirepass", "first"])
        let worker = try system.startWorker(["REDIS_URL": "redis://:first@127.0.0.1:\(server.port)/0"])
        let base = "http://" + (try await httpAddress(of: worker))
        try await waitUntil(timeout: .seconds(15), "ready") { try await get(base + "/readyz").status == 200 }
        let admin = try RedisClient(url: "redis://:first@127.0.0.1:\(server.port)/0", poolSize: 1)
        try await admin.command("CONFIG", "SET", "requirepass", "second")
        try await admin.command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
        admin.close()
        var readiness = (status: 0, body: "")
        try await waitUntil(timeout: .seconds(15), "/readyz to name REDIS_URL") {
            readiness = try await get(base + "/readyz")
            return readiness.body.contains("REDIS_URL")
        }
        #expect(readiness.status == 503, "\(readiness)")
        #expect(worker.isRunning, "the worker keeps running")
        worker.terminate()
        _ = await worker.waitForExit(timeout: 10)
        await server.stopInBackground()
        await system.stop()
    }
}
