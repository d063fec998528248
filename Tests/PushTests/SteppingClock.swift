import BlockingIO

/// A clock whose `sleep` returns at once after moving time to the deadline, recording each sleep; tests of pacing
/// code become exact and independent of machine load.
final class SteppingClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (left: Instant, right: Instant) -> Bool { left.offset < right.offset }
    }

    private let state = Locked((now: Instant(offset: .zero), sleeps: [Duration]()))

    var now: Instant { state.value.now }
    var minimumResolution: Duration { .zero }
    /// Every sleep so far, as the time it would have lasted.
    var sleeps: [Duration] { state.value.sleeps }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try Task.checkCancellation()
        state.withLock { state in
            state.sleeps.append(state.now.duration(to: deadline))
            if state.now < deadline { state.now = deadline }
        }
    }

    func advance(by duration: Duration) { state.withLock { $0.now = $0.now.advanced(by: duration) } }
}
