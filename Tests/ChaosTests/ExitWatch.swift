import Synchronization
import TestSupport

/// The workers of a system seen exited, by index, over the looks taken while a fault lasts (scenario 4).
final class ExitWatch: Sendable {
    private let system: CountdownSystem
    private let seen = Mutex<Set<Int>>([])

    init(_ system: CountdownSystem) { self.system = system }

    /// Notes every live-list worker that is no longer running.
    func look() {
        let exited = system.workers.filter { !$0.isRunning }.map(\.index)
        seen.withLock { $0.formUnion(exited) }
    }

    /// How many workers were seen exited.
    var count: Int { seen.withLock { $0.count } }
}
