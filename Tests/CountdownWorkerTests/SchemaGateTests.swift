import BlockingIO
@testable import CountdownWorker
@testable import Lifecycle
import Telemetry
import TestSupport
import Testing

@Suite struct SchemaGateTests {
    /// A service that records that it ran and returns at once.
    struct Probe: Service {
        let name = "probe"
        let ran: Locked<Bool>
        func run(shutdown: ShutdownSignal) async throws { ran.withLock { $0 = true } }
    }

    /// The database as the gate sees it: the applied version (nil: the query fails) and how often it was asked.
    final class Database: Sendable {
        let version: Locked<Int?>
        let asked = Locked(0)
        init(_ version: Int?) { self.version = Locked(version) }

        func applied() throws -> Int {
            asked.withLock { $0 += 1 }
            guard let version = version.value else { throw CancellationError() }
            return version
        }

        /// Returns once the gate has asked `count` more times (it polls every 10 ms), or fails after 5 s.
        func waitForQuestions(_ count: Int) async throws {
            let target = asked.value + count
            let deadline = ContinuousClock.now.advanced(by: .seconds(5))
            while asked.value < target {
                guard ContinuousClock.now < deadline else { throw TimedOut() }
                try await Task.sleep(for: .milliseconds(5))
            }
        }
    }

    struct TimedOut: Error {}

    static func gate(_ database: Database, sink: CapturingLogSink = CapturingLogSink()) -> SchemaGate {
        SchemaGate(requiredVersion: 4, interval: .milliseconds(10), logger: Logger(level: .info, sink: sink), appliedVersion: { try database.applied() })
    }

    @Test func theGuardedServiceRunsOnlyOnceTheRequiredVersionIsApplied() async throws {
        let database = Database(3)
        let sink = CapturingLogSink()
        let gate = Self.gate(database, sink: sink)
        let ran = Locked(false)
        let task = Task { try await gate.guarding(Probe(ran: ran)).run(shutdown: ShutdownSignal()) }
        try await database.waitForQuestions(3)
        #expect(!ran.value, "not before the migration")
        #expect(!gate.isOpen)
        database.version.withLock { $0 = 4 }
        try await task.value
        #expect(ran.value)
        #expect(gate.isOpen)
        #expect(sink.lines.filter { $0.contains("waiting for the database schema before claiming jobs") }.count == 1, "logged once")
    }

    @Test func aNewerSchemaOpensTheGateAtOnceForEveryService() async throws {
        let gate = Self.gate(Database(7))
        let first = Locked(false)
        let second = Locked(false)
        try await gate.guarding(Probe(ran: first)).run(shutdown: ShutdownSignal())
        try await gate.guarding(Probe(ran: second)).run(shutdown: ShutdownSignal())
        #expect(first.value && second.value)
    }

    @Test func errorsKeepItClosedAndShutdownEndsTheWait() async throws {
        let database = Database(nil)
        let gate = Self.gate(database)
        let ran = Locked(false)
        let shutdown = ShutdownSignal()
        let task = Task { try await gate.guarding(Probe(ran: ran)).run(shutdown: shutdown) }
        try await database.waitForQuestions(2)
        shutdown.trigger()
        try await task.value
        #expect(!ran.value, "a database error is not a schema")
        #expect(!gate.isOpen)
    }
}
