import Lifecycle
import Testing

@Suite(.timeLimit(.minutes(1))) struct DoorbellTests {
    @Test func aRingWhileNobodyWaitsEndsTheNextWaitAtOnce() async {
        let bell = Doorbell()
        bell.ring()
        bell.ring()
        await bell.wait()
        let started = ContinuousClock.now
        await bell.wait(timeout: .milliseconds(200))
        #expect(ContinuousClock.now - started >= .milliseconds(200), "two rings before one wait wake it once")
    }

    @Test func aRingWakesTheWaiter() async {
        let bell = Doorbell()
        async let woken: Void = bell.wait()
        bell.ring()
        await woken
    }

    @Test func aWaitEndsAtItsTimeoutOrWhenCancelled() async {
        let bell = Doorbell()
        await bell.wait(timeout: .milliseconds(10))
        let waiter = Task { await bell.wait() }
        waiter.cancel()
        await waiter.value
    }
}
