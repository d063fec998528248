import BlockingIO
import Testing

@Suite struct SerialThreadTests {
    private final class Captured: Sendable {}

    @Test func runsWorkInOrder() async throws {
        let thread = SerialThread(name: "serial-order")
        let order = Locked([Int]())
        for index in 0..<100 { thread.submit { order.withLock { $0.append(index) } } }
        try await thread.run {}
        #expect(order.value == Array(0..<100))
        thread.stop()
    }

    @Test func finishedWorkDoesNotKeepWhatItCapturedAlive() async throws {
        let thread = SerialThread(name: "serial-release")
        weak var released: Captured?
        do {
            let captured = Captured()
            released = captured
            try await thread.run { _ = captured }
        }
        // By the time a later item runs, the loop has let go of the earlier one.
        try await thread.run {}
        try await thread.run {}
        #expect(released == nil)
        thread.stop()
    }
}
