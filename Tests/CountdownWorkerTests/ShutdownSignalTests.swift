import CountdownDomain
import CountdownWorker
import Foundation
import Lifecycle
import Testing

@Suite(.timeLimit(.minutes(1))) struct ShutdownSignalTests {
    @Test func sleepReturnsAfterItsDurationWhenNothingTrips() async {
        let signal = ShutdownSignal()
        let started = ContinuousClock.now
        let tripped = await signal.sleep(for: .milliseconds(50))
        #expect(!tripped)
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    @Test func sleepEndsEarlyWhenTripped() async {
        let signal = ShutdownSignal()
        Task {
            try? await Task.sleep(for: .milliseconds(20))
            signal.trigger()
        }
        let started = ContinuousClock.now
        let tripped = await signal.sleep(for: .seconds(60))
        #expect(tripped)
        #expect(ContinuousClock.now - started < .seconds(30))
    }

    @Test func repeatedSleepsEachReturn() async {
        let signal = ShutdownSignal()
        for _ in 0..<20 { await signal.sleep(for: .milliseconds(1)) }
        #expect(!signal.isTriggered)
    }

    @Test func waitReturnsOnTriggerAndAfterwardsAtOnce() async {
        let signal = ShutdownSignal()
        Task {
            try? await Task.sleep(for: .milliseconds(20))
            signal.trigger()
        }
        await signal.wait()
        await signal.wait()
        #expect(await signal.sleep(for: .seconds(60)))
    }

    @Test func cancellingAWaiterEndsIt() async {
        let signal = ShutdownSignal()
        let waiter = Task { await signal.wait() }
        try? await Task.sleep(for: .milliseconds(20))
        waiter.cancel()
        await waiter.value
        #expect(!signal.isTriggered)
    }
}
