@testable import CountdownMaintenance
import CountdownStore
@testable import CountdownWorker
import Postgres
import Telemetry
import Testing
import TestSupport

/// The fleet's connections at its largest against the server's `max_connections` (docs/operations.md).
@Suite struct ConnectionBudgetTests {
    @Test func theProductionOverlayFitsItsServerInTheMiddleOfARollout() {
        // (30 workers + 8 surge) x (8 + 3) + (4 API pods + 1 surge) x 16 + (1 console + 1 surge) x 4 + 2 admin = 508.
        let production = ConnectionBudget(maxWorkers: 30, workerPoolSize: 8, apiReplicas: 4, apiPoolSize: 16,
                                          workerSurge: 8, apiSurge: 1, consoleReplicas: 1, consoleSurge: 1)
        #expect(production.needed == 508)
        #expect(production.excess(on: .init(maxConnections: 520, reserved: 3)) == nil)
        // At rest the old figure fitted 400; the rollout's surge and the console do not.
        #expect(production.excess(on: .init(maxConnections: 400, reserved: 3)) == 111)
        #expect(production.largestFittingPool(on: .init(maxConnections: 520, reserved: 3)) == 8)
        #expect(production.largestFittingPool(on: .init(maxConnections: 100, reserved: 3)) == nil)
        // The defaults the issue measured: 32 + 3 per worker, 16 per API pod, 3-30 workers and 3 API pods.
        #expect(ConnectionBudget(maxWorkers: 30, workerPoolSize: 32, apiReplicas: 3, apiPoolSize: 16).needed == 1_100)
        #expect(ConnectionBudget(maxWorkers: 3, workerPoolSize: 32, apiReplicas: 3, apiPoolSize: 16).needed == 155)
    }

    @Test func theSurgeAndTheConsoleAreCounted() {
        let atRest = ConnectionBudget(maxWorkers: 30, workerPoolSize: 8, apiReplicas: 3, apiPoolSize: 16)
        #expect(atRest.needed == 380)
        var rolling = atRest
        rolling.workerSurge = ConnectionBudget.defaultSurge(30)
        rolling.apiSurge = 1
        #expect(rolling.workerSurge == 8)
        #expect(rolling.needed == 380 + 8 * 11 + 16)
        rolling.consoleReplicas = 1
        rolling.consoleSurge = ConnectionBudget.defaultSurge(1)
        #expect(rolling.needed == 380 + 8 * 11 + 16 + 2 * ConnectionBudget.consoleConnections)
        #expect(ConnectionBudget.defaultSurge(0) == 0 && ConnectionBudget.defaultSurge(4) == 1 && ConnectionBudget.defaultSurge(5) == 2)
    }

    @Test func theBaseFitsTheDefaultServerExactlyAsOperationsSays() {
        // Base: (6 workers + 2) x (4 + 3) + (3 API pods + 1) x 6 + (1 console + 1) x 4 + 2 = 90 <= 100 - 3.
        let base = ConnectionBudget(maxWorkers: 6, workerPoolSize: 4, apiReplicas: 3, apiPoolSize: 6,
                                    workerSurge: 2, apiSurge: 1, consoleReplicas: 1, consoleSurge: 1)
        #expect(base.needed == 90)
        #expect(base.excess(on: .init(maxConnections: 100, reserved: 3)) == nil)
        #expect(base.excess(on: .init(maxConnections: 92, reserved: 3)) == 1)
        #expect(base.largestFittingPool(on: .init(maxConnections: 100, reserved: 3)) == 4)
    }

    @Test func aFleetTooLargeForTheServerIsAWarningWithTheNumbers() async throws {
        let client = PostgresClient(configuration: try PostgresConfiguration(url: TestEnvironment.databaseURL), maxConnections: 1)
        defer { client.close() }
        let server = try await ConnectionBudgetCheck.readServer(StoreClient(client))
        #expect(server.maxConnections > 0)
        #expect(server.reserved >= 0 && server.reserved < server.maxConnections)

        let sink = CapturingLogSink()
        let tooLarge = ConnectionBudget(maxWorkers: server.maxConnections, workerPoolSize: 4, apiReplicas: 1, apiPoolSize: 16)
        let gauge = MetricsRegistry().gauge("countdown_connection_budget", help: "", labels: ["part"])
        let excess = await ConnectionBudgetCheck(fleet: tooLarge, database: StoreClient(client), logger: Logger(level: .info, sink: sink),
                                                 gauge: gauge).run()
        #expect(excess == tooLarge.needed - server.available)
        #expect(gauge.value(labels: "needed") == Double(tooLarge.needed))
        #expect(gauge.value(labels: "available") == Double(server.available))
        let warning = sink.lines.first { $0.contains("\"level\":\"warn\"") }
        #expect(warning?.contains("\"max_connections\":\(server.maxConnections)") == true, "\(sink.lines)")
        #expect(warning?.contains("\"needed\":\(tooLarge.needed)") == true, "\(sink.lines)")

        sink.clear()
        let small = ConnectionBudget(maxWorkers: 1, workerPoolSize: 1, apiReplicas: 0, apiPoolSize: 1)
        #expect(await ConnectionBudgetCheck(fleet: small, database: StoreClient(client), logger: Logger(level: .info, sink: sink)).run() == nil)
        #expect(!sink.lines.contains { $0.contains("\"level\":\"warn\"") }, "\(sink.lines)")
    }

    @Test func behindAPoolerTheBudgetIsComparedWithItsClientLimitWithoutAskingTheServer() async throws {
        let refusing = RefusingPort()
        defer { refusing.release() }
        let client = PostgresClient(configuration: try PostgresConfiguration(url: "postgres://countdown@\(refusing.address)/countdown?connect_timeout=1"),
                                    maxConnections: 1)
        defer { client.close() }
        let gauge = MetricsRegistry().gauge("countdown_connection_budget", help: "", labels: ["part"])
        let fleet = ConnectionBudget(maxWorkers: 30, workerPoolSize: 8, apiReplicas: 4, apiPoolSize: 16, workerSurge: 8, apiSurge: 1,
                                     consoleReplicas: 1, consoleSurge: 1, poolerMaxClients: 500)
        let excess = await ConnectionBudgetCheck(fleet: fleet, database: StoreClient(client), logger: Logger(level: .error), gauge: gauge).run()
        #expect(excess == 8)
        #expect(gauge.value(labels: "available") == 500)
    }

    @Test func anUnreachableServerIsAWarningNotAFailure() async throws {
        let refusing = RefusingPort()
        defer { refusing.release() }
        let url = "postgres://countdown@\(refusing.address)/countdown?connect_timeout=1"
        let client = PostgresClient(configuration: try PostgresConfiguration(url: url), maxConnections: 1)
        defer { client.close() }
        let sink = CapturingLogSink()
        let fleet = ConnectionBudget(maxWorkers: 3, workerPoolSize: 4, apiReplicas: 1, apiPoolSize: 8)
        #expect(await ConnectionBudgetCheck(fleet: fleet, database: StoreClient(client), logger: Logger(level: .info, sink: sink)).run() == nil)
        #expect(sink.lines.contains { $0.contains("could not read max_connections") }, "\(sink.lines)")
    }
}
