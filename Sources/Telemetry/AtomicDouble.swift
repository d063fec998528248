import Synchronization

/// A `Double` updated lock-free (its bit pattern in an atomic, `add` by compare-and-exchange).
final class AtomicDouble: Sendable {
    private let bits: Atomic<UInt64>

    init(_ value: Double = 0) { bits = Atomic(value.bitPattern) }

    var value: Double { Double(bitPattern: bits.load(ordering: .relaxed)) }

    func set(_ value: Double) { bits.store(value.bitPattern, ordering: .relaxed) }

    func add(_ delta: Double) {
        var current = bits.load(ordering: .relaxed)
        while true {
            let next = (Double(bitPattern: current) + delta).bitPattern
            let (exchanged, original) = bits.weakCompareExchange(
                expected: current, desired: next, successOrdering: .relaxed, failureOrdering: .relaxed)
            if exchanged { return }
            current = original
        }
    }
}
