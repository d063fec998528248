import BlockingIO
import Testing
import TestSupport

@Suite struct DelayLineTests {
    @Test func manyWaitsEachLastAtLeastTheirDurationAndRunTogether() async throws {
        let line = DelayLine(slack: .milliseconds(1))
        let clock = ContinuousClock()
        let started = clock.now
        let elapsed = await withTaskGroup(of: Duration.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    let begun = clock.now
                    await line.wait(for: .milliseconds(50))
                    return clock.now - begun
                }
            }
            return await group.reduce(into: [Duration]()) { $0.append($1) }
        }
        #expect(elapsed.count == 200)
        #expect(elapsed.allSatisfy { $0 >= .milliseconds(49) }, "shortest \(elapsed.min() ?? .zero)")
        // 200 waits of 50 ms one after another would take 10 s.
        #expect(clock.now - started < .seconds(3))
        #expect(line.waiting == 0)
        line.stop()
    }

    /// Waits added one after another, the later ones shorter: each ends before the one added before it.
    @Test func waitsEndInTheOrderOfTheirDeadlines() async throws {
        let line = DelayLine()
        let order = Locked([Int]())
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, milliseconds) in [2000, 1000, 50].enumerated() {
                group.addTask {
                    await line.wait(for: .milliseconds(milliseconds))
                    order.withLock { $0.append(milliseconds) }
                }
                // The next wait is added only once this one is held, so the deadlines are known to be in this order.
                try await waitUntil("wait \(index + 1) held") { line.waiting + order.value.count == index + 1 }
            }
            try await group.waitForAll()
        }
        #expect(order.value == [50, 1000, 2000])
        line.stop()
    }

    @Test func stopEndsEveryWaitAtOnceAndLaterWaitsReturnAtOnce() async throws {
        let line = DelayLine()
        let clock = ContinuousClock()
        let started = clock.now
        let long = Task { await line.wait(for: .seconds(600)) }
        try await waitUntil("the wait is held") { line.waiting == 1 }
        line.stop()
        await long.value
        await line.wait(for: .seconds(600))
        #expect(clock.now - started < .seconds(10))
        #expect(line.waiting == 0)
    }

    @Test func scheduledActionsRunOnTheLineInDeadlineOrderAfterTheirDelay() async throws {
        let line = DelayLine()
        let clock = ContinuousClock()
        let started = clock.now
        let ran = Locked<[(String, Duration)]>([])
        line.schedule(after: .milliseconds(120)) { ran.withLock { $0.append(("late", clock.now - started)) } }
        line.schedule(after: .milliseconds(40)) { ran.withLock { $0.append(("early", clock.now - started)) } }
        line.schedule(after: .zero) { ran.withLock { $0.append(("now", clock.now - started)) } }
        #expect(ran.value.map(\.0) == ["now"], "a zero delay runs on the caller's thread at once")
        try await waitUntil("both delayed actions ran") { ran.value.count == 3 }
        #expect(ran.value.map(\.0) == ["now", "early", "late"])
        #expect(ran.value[1].1 >= .milliseconds(39) && ran.value[2].1 >= .milliseconds(119))
        line.schedule(after: .seconds(600)) { ran.withLock { $0.append(("stopped", .zero)) } }
        line.stop()
        try await waitUntil("stop runs what waits") { ran.value.count == 4 }
        line.schedule(after: .seconds(600)) { ran.withLock { $0.append(("after stop", .zero)) } }
        #expect(ran.value.map(\.0).last == "after stop")
    }

    @Test func aWaitOfZeroReturnsAtOnce() async {
        let line = DelayLine()
        await line.wait(for: .zero)
        await line.wait(for: .milliseconds(-5))
        #expect(line.waiting == 0)
        line.stop()
    }
}
