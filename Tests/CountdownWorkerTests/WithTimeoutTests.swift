import Lifecycle
import Testing

@Suite(.timeLimit(.minutes(1))) struct WithTimeoutTests {
    @Test func aWaitThatEndsInTimeReturnsTrueWithoutWaitingForItsTimer() async {
        let signal = ShutdownSignal()
        signal.trigger()
        let started = ContinuousClock.now
        #expect(await withTimeout(.seconds(120)) { await signal.wait() })
        #expect(ContinuousClock.now - started < .seconds(60), "the timer was cancelled, not waited for")
    }

    @Test func aWaitStillRunningAtTheTimeoutIsCancelled() async {
        let bell = Doorbell()
        #expect(await withTimeout(.milliseconds(20)) { await bell.wait() } == false)
        bell.ring()
        #expect(await withTimeout(.seconds(120)) { await bell.wait() }, "the ring after the cancelled wait is kept for the next one")
    }

    @Test func noTimeoutWaitsForTheWaitAlone() async {
        let signal = ShutdownSignal()
        async let waited = withTimeout(nil) { await signal.wait() }
        signal.trigger()
        #expect(await waited)
    }
}
