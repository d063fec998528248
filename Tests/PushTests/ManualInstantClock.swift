import BlockingIO

/// A monotonic clock tests move by hand, for types that take `@Sendable () -> ContinuousClock.Instant`.
final class ManualInstantClock: Sendable {
    private let offset = Locked(Duration.zero)
    private let origin = ContinuousClock.now

    var now: ContinuousClock.Instant { origin + offset.value }

    func advance(by duration: Duration) { offset.withLock { $0 += duration } }
}
