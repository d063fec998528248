import CountdownMaintenance
import CountdownStore
import CountdownWorker
import Postgres
import Telemetry
import Testing
import TestSupport

/// The fleet's connections at its largest against the server's `max_connections` (docs/operations.md).
@Suite struct ConnectionBudgetTests {
    @Test func theProductionOverlayFitsFourHundredConnectionsAndNotTheDefaultHundred() {
        // 30 workers x (8 + 3) + 3 API pods x 16 + 2 admin = 380.
        let production = ConnectionBudget(maxWorkers: 30, workerPoolSize: 8, apiReplicas: 3, apiPoolSize: 16)
        #expect(production.needed == 380)
        #expect(production.excess(on: .init(maxConnections: 400, reserved: 3)) == nil)
        #expect(production.excess(on: .init(maxConnections: 100, reserved: 3)) == 283)
        #expect(production.largestFittingPool(on: .init(maxConnections: 400, reserved: 3)) == 8)
        #expect(production.largestFittingPool(on: .init(maxConnections: 100, reserved: 3)) == nil)
        // The defaults the issue measured: 32 + 3 per worker, 16 per API pod, 3-30 workers and 3 API pods.
        #expect(ConnectionBudget(maxWorkers: 30, workerPoolSize: 32, apiReplicas: 3, apiPoolSize: 16).needed == 1_100)
        #expect(ConnectionBudget(maxWorkers: 3, workerPoolSize: 32, apiReplicas: 3, apiPoolSize: 16).needed == 155)
    }

    @Test func theBaseFitsTheDefaultServerExactlyAsOperationsSays() {
        // Base: 10 workers x (4 + 3) + 2 API pods x 8 + 2 = 88 <= 100 - 3.
        let base = ConnectionBudget(maxWorkers: 10, workerPoolSize: 4, apiReplicas: 2, apiPoolSize: 8)
        #expect(base.needed == 88)
        #expect(base.excess(on: .init(maxConnections: 100, reserved: 3)) == nil)
        #expect(base.excess(on: .init(maxConnections: 90, reserved: 3)) == 1)
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
        let excess = await ConnectionBudgetCheck(fleet: tooLarge, database: StoreClient(client), logger: Logger(level: .info, sink: sink)).run()
        #expect(excess == tooLarge.needed - server.available)
        let warning = sink.lines.first { $0.contains("\"level\":\"warn\"") }
        #expect(warning?.contains("\"max_connections\":\(server.maxConnections)") == true, "\(sink.lines)")
        #expect(warning?.contains("\"needed\":\(tooLarge.needed)") == true, "\(sink.lines)")

        sink.clear()
        let small = ConnectionBudget(maxWorkers: 1, workerPoolSize: 1, apiReplicas: 0, apiPoolSize: 1)
        #expect(await ConnectionBudgetCheck(fleet: small, database: StoreClient(client), logger: Logger(level: .info, sink: sink)).run() == nil)
        #expect(!sink.lines.contains { $0.contains("\"level\":\"warn\"") }, "\(sink.lines)")
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
