import BlockingIO
@testable import CountdownWorker
import Foundation
@testable import Lifecycle
import Telemetry
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(1))) struct ServiceGroupTests {
    /// Records when it stops; `ignoresSignal` keeps running after its signal until cancelled; `failsAfter` throws.
    struct Probe: Service {
        let name: String
        let log: Locked<[String]>
        var ignoresSignal = false
        var failsAfter: Duration?

        struct Failed: Error {}

        func run(shutdown: ShutdownSignal) async throws {
            if let failsAfter {
                try await Task.sleep(for: failsAfter)
                throw Failed()
            }
            if ignoresSignal {
                while !Task.isCancelled { try? await Task.sleep(for: .seconds(60)) }
                log.withLock { $0.append("\(name) cancelled") }
                return
            }
            await shutdown.wait()
            log.withLock { $0.append("\(name) stopped") }
        }
    }

    static let logger = Logger(level: .error, sink: CapturingLogSink())

    @Test func servicesStopInReverseOrder() async {
        let log = Locked([String]())
        let shutdown = ShutdownSignal()
        let group = ServiceGroup(services: ["health", "relay", "dispatcher"].map { Probe(name: $0, log: log) }, grace: .seconds(5),
                                 logger: Self.logger)
        Task {
            try? await Task.sleep(for: .milliseconds(50))
            shutdown.trigger()
        }
        let outcome = await group.run(shutdown: shutdown)
        #expect(outcome == ServiceGroup.Outcome(failed: false, stoppedInTime: true))
        #expect(log.value == ["dispatcher stopped", "relay stopped", "health stopped"])
    }

    @Test func aServiceThatIgnoresItsSignalIsCancelledAtTheDeadline() async {
        let log = Locked([String]())
        let shutdown = ShutdownSignal()
        let group = ServiceGroup(services: [Probe(name: "health", log: log), Probe(name: "stuck", log: log, ignoresSignal: true)],
                                 grace: .milliseconds(200), logger: Self.logger)
        shutdown.trigger()
        let started = ContinuousClock.now
        let outcome = await group.run(shutdown: shutdown)
        #expect(!outcome.stoppedInTime)
        #expect(!outcome.failed)
        #expect(log.value.contains("stuck cancelled"))
        #expect(ContinuousClock.now - started < .seconds(10))
    }

    @Test func aFailingServiceStopsTheGroup() async {
        let log = Locked([String]())
        let shutdown = ShutdownSignal()
        let group = ServiceGroup(services: [Probe(name: "health", log: log), Probe(name: "relay", log: log, failsAfter: .milliseconds(20))],
                                 grace: .seconds(5), logger: Self.logger)
        let outcome = await group.run(shutdown: shutdown)
        #expect(outcome.failed)
        #expect(shutdown.isTriggered)
        #expect(log.value == ["health stopped"])
    }
}
