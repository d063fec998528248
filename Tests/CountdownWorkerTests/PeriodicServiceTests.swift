import BlockingIO
import Lifecycle
import Testing
import TestSupport

@Suite struct PeriodicServiceTests {
    /// Counts its rounds and asks for `waits` in turn (then `later`), recording `finish`.
    final class Rounds: PeriodicService {
        let name = "rounds"
        let waits: [Duration?]
        let later: Duration?
        let rounds = Locked(0)
        let finished = Locked(0)

        init(_ waits: [Duration?], later: Duration?) {
            self.waits = waits
            self.later = later
        }

        func runOnce() async -> Duration? {
            let round = rounds.withLock { count -> Int in
                count += 1
                return count
            }
            return round <= waits.count ? waits[round - 1] : later
        }

        func finish() async { finished.withLock { $0 += 1 } }
    }

    @Test func roundsRepeatUntilShutdownCutsTheWaitShortThenFinishRunsOnce() async throws {
        let service = Rounds([.zero, .milliseconds(1)], later: .seconds(3600))
        let shutdown = ShutdownSignal()
        let task = Task { try await service.run(shutdown: shutdown) }
        try await waitUntil("three rounds") { service.rounds.value == 3 }
        let started = ContinuousClock.now
        shutdown.trigger()
        try await task.value
        #expect(ContinuousClock.now - started < .seconds(5), "the hour-long wait ends at the shutdown")
        #expect(service.rounds.value == 3)
        #expect(service.finished.value == 1)
    }

    @Test func aRoundWithoutANextWaitStopsTheServiceAndStillFinishes() async throws {
        let service = Rounds([.zero, nil], later: .zero)
        try await service.run(shutdown: ShutdownSignal())
        #expect(service.rounds.value == 2)
        #expect(service.finished.value == 1)
    }

    @Test func aServiceShutDownBeforeItStartsRunsNoRound() async throws {
        let service = Rounds([], later: .zero)
        let shutdown = ShutdownSignal()
        shutdown.trigger()
        try await service.run(shutdown: shutdown)
        #expect(service.rounds.value == 0)
        #expect(service.finished.value == 1)
    }

    @Test func aCancelledServiceStopsWithoutItsSignalAndStillFinishes() async throws {
        let service = Rounds([], later: .seconds(3600))
        let task = Task { try await service.run(shutdown: ShutdownSignal()) }
        try await waitUntil("the first round") { service.rounds.value == 1 }
        task.cancel()
        try await task.value
        #expect(service.rounds.value == 1, "a cancelled wait does not start round after round")
        #expect(service.finished.value == 1)
    }
}
