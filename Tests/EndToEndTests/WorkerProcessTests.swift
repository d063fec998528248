import CountdownDomain
import CountdownStore
import CountdownWorker
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Telemetry
import Testing
import TestSupport

/// The process itself: configuration errors, health endpoints, the metrics contract with deploy/, SIGTERM.
@Suite(.serialized) struct WorkerProcessTests {
    func httpAddress(of worker: WorkerHandle) async throws -> String {
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

    @Test func redisTLSAndSentinelMistakesAreNamedAtStartAndInReadiness() async throws {
        let system = try await CountdownSystem()
        for (settings, variable) in [
            (["REDIS_TLS_CA_FILE": "/etc/hostname"], "REDIS_TLS_CA_FILE"),
            (["REDIS_SENTINELS": "sentinel-0:26379"], "REDIS_SENTINEL_MASTER"),
        ] {
            let worker = try system.startWorker(settings)
            #expect(await worker.waitForExit(timeout: 10) == 2)
            #expect(worker.log.split(separator: "\n").count == 1 && worker.log.contains(variable), "\(worker.log)")
        }

        let certificates = try TestCertificates()
        let server = try await ThrowawayRedis.startTLS(certificates)
        let worker = try system.startWorker(["REDIS_URL": server.tlsURL(), "REDIS_TLS_CA_FILE": certificates.otherCAFile])
        let base = "http://" + (try await httpAddress(of: worker))
        var readiness = (status: 0, body: "")
        try await waitUntil(timeout: .seconds(15), "/readyz to name the CA file") {
            readiness = try await get(base + "/readyz")
            return readiness.body.contains("REDIS_TLS_CA_FILE")
        }
        #expect(readiness.status == 503, "\(readiness)")
        worker.terminate()
        _ = await worker.waitForExit(timeout: 10)
        await server.stopInBackground()
        await system.stop()
    }
}
