import Synchronization

/// The `PUSH_CONCURRENCY` slots a batch of pushes takes. An update's or end's slot is given back as its answer
/// arrives; a start's or reminder's once its outcome is recorded, so a slot takes its next push only when the
/// previous one's outcome is in PostgreSQL, and a crash repeats at most one push per slot (SPEC 12.1). A batch's
/// slots are given back at most once each (never more than it took); whatever is still held when the value goes
/// away is given back then (a caller that stopped early never keeps a slot).
public final class PushSlots: Sendable {
    private let giveBack: @Sendable (Int) -> Void
    private let held: Mutex<Int>

    /// - Parameters:
    ///   - count: the slots held.
    ///   - giveBack: gives back that many slots to the gateway.
    public init(_ count: Int, giveBack: @escaping @Sendable (Int) -> Void) {
        self.giveBack = giveBack
        held = Mutex(max(0, count))
    }

    /// Slots that hold nothing (a gateway without a bound on pushes in flight).
    public static var none: PushSlots { PushSlots(0) { _ in } }

    /// Slots not yet given back.
    public var count: Int { held.withLock { $0 } }

    /// Gives back `count` slots (at most those still held): the outcomes of that many pushes are recorded.
    public func release(_ count: Int) {
        let given = held.withLock { held -> Int in
            let given = min(held, max(0, count))
            held -= given
            return given
        }
        if given > 0 { giveBack(given) }
    }

    /// Gives back every slot still held.
    public func releaseAll() {
        release(Int.max)
    }

    deinit {
        let rest = held.withLock { $0 }
        if rest > 0 { giveBack(rest) }
    }
}
