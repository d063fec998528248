import CountdownMaintenance
import Foundation
import Testing
import TestSupport

/// The worker's start-up connection budget check (`FLEET_MAX_WORKERS`, docs/operations.md).
@Suite(.serialized) struct ConnectionBudgetStartTests {
    @Test func aWorkerWarnsAtStartWhenTheFleetCannotFitMaxConnections() async throws {
        let system = try await CountdownSystem()
        let worker = try system.startWorker(["FLEET_MAX_WORKERS": "10000", "FLEET_API_REPLICAS": "3", "DATABASE_POOL_SIZE": "4"])
        try await waitUntil(timeout: .seconds(15), "the connection budget warning") {
            worker.log.contains("more PostgreSQL connections than max_connections allows")
        }
        let line = worker.log.split(separator: "\n").first { $0.contains("more PostgreSQL connections") }.map(String.init) ?? ""
        // (10000 + a 25 % surge of 2500) x (4 + 3) + (3 + 1) x 16 + (1 console + 1) x 4 + 2
        #expect(line.contains("\"needed\":87574"), "\(line)")
        #expect(line.contains("\"level\":\"warn\""), "\(line)")
        #expect(worker.isRunning, "a warning, not a stop")
        let scrape = await worker.metrics()
        #expect(scrape["countdown_connection_budget{part=\"needed\"}"] == 87574, "\(scrape.filter { $0.key.hasPrefix("countdown_connection") })")
        #expect((scrape["countdown_connection_budget{part=\"available\"}"] ?? 0) > 0)
        await system.stop()
    }

    @Test func aWorkerThatFitsSaysSoAndOneWithoutFleetSizeChecksNothing() async throws {
        let system = try await CountdownSystem()
        let fits = try system.startWorker(["FLEET_MAX_WORKERS": "1", "FLEET_API_REPLICAS": "0", "DATABASE_POOL_SIZE": "2"])
        let unchecked = try system.startWorker()
        try await waitUntil(timeout: .seconds(15), "the connection budget line") {
            fits.log.contains("connections fit max_connections")
        }
        try await waitUntil(timeout: .seconds(15), "the second worker to start") { unchecked.log.contains("worker starting") }
        #expect(!unchecked.log.contains("max_connections"), "\(unchecked.log)")
        await system.stop()
    }
}
