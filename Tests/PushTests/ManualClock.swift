import BlockingIO
import Foundation

/// A wall clock tests move by hand.
final class ManualClock: Sendable {
    private let current: Locked<Date>

    init(_ start: Date = Date(timeIntervalSince1970: 1_776_384_000)) { current = Locked(start) }

    var now: Date { current.value }

    /// The clock as the `@Sendable () -> Date` the push types take.
    var function: @Sendable () -> Date { { self.now } }

    func advance(by seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}
