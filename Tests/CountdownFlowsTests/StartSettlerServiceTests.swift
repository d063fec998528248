import BlockingIO
import CountdownDomain
import CountdownFlows
import CountdownStore
import Lifecycle
import Telemetry
import TestSupport
import Testing

/// The settler as a service of the worker's group: it writes what is queued when asked to stop, keeps trying while
/// the database refuses within the grace period, and stops (releasing its waiters) when cancelled at the deadline.
@Suite(.timeLimit(.minutes(1))) struct StartSettlerServiceTests {
    /// Records what it is asked to write; fails the first `failing` writes (-1: every write); `observing` runs at
    /// the start of every attempt.
    final class Store: StartOutcomeSettling {
        struct Refused: Error {}
        let written = Locked([StartLedger.Settlement]())
        let attempts = Locked(0)
        let failing: Int
        let observing: @Sendable () -> Void

        init(failing: Int = 0, observing: @escaping @Sendable () -> Void = {}) {
            self.failing = failing
            self.observing = observing
        }

        func settle(_ settlements: [StartLedger.Settlement], refused: [DeviceTokenQueries.Invalidation]) async throws -> [StartLedger.Refused] {
            observing()
            let attempt = attempts.withLock { count -> Int in
                count += 1
                return count
            }
            if failing < 0 || attempt <= failing { throw Refused() }
            written.withLock { $0 += settlements }
            return []
        }
    }

    /// Stands for the dispatcher: at shutdown its last jobs hand their outcomes to the settler, then it returns.
    struct DrainingJobs: Service {
        let name = "dispatcher"
        let settler: StartSettler
        let outcomes: [StartSettler.Result]

        func run(shutdown: ShutdownSignal) async throws {
            await shutdown.wait()
            let ticket = await settler.openTicket()
            await settler.add(outcomes, to: ticket)
            await settler.abandon(ticket)
        }
    }

    static func outcomes(_ count: Int) -> [StartSettler.Result] {
        (1...count).map {
            StartSettler.Result(StartLedger.Settlement(.init(.init(stream: "s", user: "u\($0)", device: "d\($0)"), generation: 1), owner: "me",
                                                       status: .sent, reason: nil))
        }
    }

    /// A gather time no test waits for and a fill no test reaches: only stopping can start the write.
    static func settler(_ store: Store) -> StartSettler {
        StartSettler(store: store, logger: Logger(level: .error, sink: CapturingLogSink()), batch: 500, fill: 500, gather: .seconds(3600))
    }

    @Test func stoppingWritesWhatIsQueuedWithoutWaitingForTheGatherTime() async throws {
        let store = Store()
        let settler = Self.settler(store)
        let shutdown = ShutdownSignal()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await settler.run(shutdown: shutdown) }
            let ticket = await settler.openTicket()
            await settler.hold(Self.outcomes(3).map(\.settlement.key))
            await settler.add(Self.outcomes(3), to: ticket)
            shutdown.trigger()
            try await settler.settle(ticket)
            try await group.waitForAll()
        }
        #expect(store.written.value.map(\.key.device) == ["d1", "d2", "d3"])
        #expect(await settler.unsettled == 0)
        #expect(await settler.heldRows.isEmpty)
    }

    @Test func aWriteRefusedAtShutdownIsTriedAgainUntilItGoesThrough() async throws {
        let store = Store(failing: 2)
        let settler = Self.settler(store)
        let shutdown = ShutdownSignal()
        let ticket = await settler.openTicket()
        await settler.add(Self.outcomes(2), to: ticket)
        await settler.abandon(ticket)
        shutdown.trigger()
        try await settler.run(shutdown: shutdown)
        #expect(store.attempts.value == 3)
        #expect(store.written.value.count == 2)
        #expect(await settler.unsettled == 0)
    }

    /// A push's slot goes back only once its outcome is committed: while PostgreSQL refuses the write the slots stay
    /// taken (the worker's next recorded pushes wait), so a crash repeats at most one push per slot (SPEC 12.1).
    @Test func theSlotsOfAnsweredPushesGoBackOnlyOnceTheirOutcomesAreCommitted() async throws {
        // The slots given back, seen by each write attempt (read there: the settler may retry at once after the
        // second refusal, before the test looks).
        let given = Locked(0)
        let givenAtAttempts = Locked([Int]())
        let store = Store(failing: 2) { givenAtAttempts.withLock { $0.append(given.value) } }
        let settler = StartSettler(store: store, logger: Logger(level: .error, sink: CapturingLogSink()), gather: .milliseconds(1))
        let shutdown = ShutdownSignal()
        let first = PushSlots(2) { count in given.withLock { $0 += count } }
        let second = PushSlots(1) { count in given.withLock { $0 += count } }
        let ticket = await settler.openTicket()
        await settler.add(Array(Self.outcomes(3).prefix(2)), to: ticket, slots: first)
        await settler.add([Self.outcomes(3)[2]], to: ticket, slots: second)
        #expect(given.value == 0 && first.count == 2 && second.count == 1, "queued in memory: the slots stay taken")
        let run = Task { try await settler.run(shutdown: shutdown) }
        while store.attempts.value < 2 { await Task.yield() }
        #expect(givenAtAttempts.value.prefix(2) == [0, 0], "the database refused the write: still taken")
        try await settler.settle(ticket)
        #expect(store.written.value.count == 3)
        #expect(given.value == 3 && first.count == 0 && second.count == 0, "committed: one slot back per outcome")
        shutdown.trigger()
        try await run.value
    }

    @Test func cancelledAtTheGraceDeadlineItStopsAndNoFanoutWaitsForever() async throws {
        let store = Store(failing: -1)
        let settler = Self.settler(store)
        let shutdown = ShutdownSignal()
        let ticket = await settler.openTicket()
        await settler.add(Self.outcomes(1), to: ticket)
        let run = Task { try await settler.run(shutdown: shutdown) }
        shutdown.trigger()
        while store.attempts.value < 2 { await Task.yield() }
        run.cancel()
        try await run.value
        #expect(await settler.unsettled == 1, "what could not be written is not pretended written")
        await #expect(throws: CancellationError.self, "a fan-out learns at once that the outcomes will not be written") {
            try await settler.settle(ticket)
        }
    }

    /// In the worker's order (the settler listed before the dispatcher, so stopped after it), outcomes of jobs that
    /// finish while the dispatcher drains are written before the group returns and the pools close.
    @Test func inTheServiceGroupOutcomesOfDrainedJobsAreWrittenBeforeItReturns() async throws {
        let store = Store()
        let settler = Self.settler(store)
        let shutdown = ShutdownSignal()
        let group = ServiceGroup(services: [settler, DrainingJobs(settler: settler, outcomes: Self.outcomes(4))], grace: .seconds(30),
                                 logger: Logger(level: .error, sink: CapturingLogSink()))
        shutdown.trigger()
        let outcome = await group.run(shutdown: shutdown)
        #expect(!outcome.failed && outcome.stoppedInTime)
        #expect(store.written.value.count == 4)
    }
}
