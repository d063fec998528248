import BlockingIO
import CountdownStore

/// Group commit for device registrations: concurrent upserts share one statement and one transaction.
///
/// A registration waits only while an earlier batch is being written (never on a timer), so a lone request
/// costs one round trip as before, and under load each round trip carries every registration that arrived
/// meanwhile. A batch never holds the same device twice (a repeat waits for the next batch, keeping order).
/// If a batch of several fails for a reason other than a lost database, its registrations are written one by
/// one, so each request gets its own answer (an unknown user, or a row locked past `lock_timeout`, fails only
/// that request).
///
/// Authorization is part of the write, not a check before it: `write` returns one `DeviceUpsertOutcome` per
/// item (in the order given), decided under the device's row lock, so a refused or taken-over registration
/// answers its own request while the rest of the batch commits.
public final class DeviceUpsertBatcher: Sendable {
    /// A registration and its caller's user, as the store writes it.
    public typealias Item = DeviceOwnershipQueries.Item

    /// What a waiting registration is woken with: its outcome, or a writer's role (its registration still waits).
    /// Writers are callers of `submit`, each writing in its own task until its own registration is written: no task
    /// works for the batcher.
    private enum Turn {
        case done(Result<DeviceUpsertOutcome, any Error>)
        case write
    }

    private struct Waiting {
        let id: UInt64
        let item: Item
        /// Nil while its caller is a writer (it takes its own outcome).
        var continuation: CheckedContinuation<Turn, Never>?
    }

    private struct State {
        var queue: [Waiting] = []
        var writers = 0
        /// Devices in a batch being written: a later registration of one waits, so the last one sent wins.
        var writing = Set<String>()
        var nextID: UInt64 = 0
    }

    /// Most registrations in one statement.
    public let maxBatch: Int
    /// Batches written at the same time (each on its own pooled connection).
    public let maxWriters: Int
    private let write: @Sendable ([Item]) async throws -> [DeviceUpsertOutcome]
    private let state = Locked(State())

    /// - Parameters:
    ///   - write: writes a batch (one transaction) and returns each item's outcome, in order.
    public init(maxBatch: Int = 256, maxWriters: Int = 2, write: @escaping @Sendable ([Item]) async throws -> [DeviceUpsertOutcome]) {
        precondition(maxBatch > 0 && maxWriters > 0)
        self.maxBatch = maxBatch
        self.maxWriters = maxWriters
        self.write = write
    }

    /// Registrations waiting for a batch (not counting those being written).
    public var waiting: Int { state.withLock { $0.queue.count } }

    /// Writes `registration` (with the next batch); returns its outcome once it is committed.
    @discardableResult
    public func submit(_ registration: DeviceRegistration, userID: String?) async throws -> DeviceUpsertOutcome {
        let item = Item(registration: registration, userID: userID)
        var id: UInt64 = 0
        var turn = await withCheckedContinuation { (continuation: CheckedContinuation<Turn, Never>) in
            let write = state.withLock { state -> Bool in
                state.nextID += 1
                id = state.nextID
                let write = state.writers < maxWriters
                if write { state.writers += 1 }
                state.queue.append(Waiting(id: id, item: item, continuation: write ? nil : continuation))
                return write
            }
            if write { continuation.resume(returning: .write) }
        }
        while true {
            switch turn {
            case .done(let result): return try result.get()
            case .write:
                if let mine = await writeUntilWritten(id) { return try mine.get() }
                // Its device is being written by another writer: wait to be woken with the outcome or the role again.
                turn = await withCheckedContinuation { [id] in retire(waiting: (id, $0)) }
            }
        }
    }

    /// A writer's work: batches, in arrival order, until its own registration (`id`) is written; nil when it is held
    /// back by a batch another writer writes. Then the role goes to the next registration waiting.
    private func writeUntilWritten(_ id: UInt64) async -> Result<DeviceUpsertOutcome, any Error>? {
        while let batch = takeBatch(writer: id) {
            let results = await writeBatch(batch.map(\.item))
            finished(batch)
            if Task.isCancelled, results.contains(where: { if case .failure = $0 { true } else { false } }) {
                // This writer's request was cancelled (its deadline passed) and the write failed with it: the other
                // registrations wait for the next writer.
                state.withLock { state in
                    state.queue.removeAll { $0.id == id }
                    state.queue.insert(contentsOf: batch.filter { $0.continuation != nil }, at: 0)
                }
                retire()
                return .failure(CancellationError())
            }
            var own: Result<DeviceUpsertOutcome, any Error>?
            for (waiting, result) in zip(batch, results) {
                if let continuation = waiting.continuation { continuation.resume(returning: .done(result)) } else { own = result }
            }
            if let own {
                retire()
                return own
            }
        }
        return nil
    }

    /// Writes a batch: one outcome or error per registration, in order.
    private func writeBatch(_ items: [Item]) async -> [Result<DeviceUpsertOutcome, any Error>] {
        do {
            let outcomes = try await write(items)
            precondition(outcomes.count == items.count, "a batch write must return one outcome per item")
            return outcomes.map { .success($0) }
        } catch where StoreError(classifying: error)?.code == .unreachable || items.count == 1 {
            return items.map { _ in .failure(error) }  // the database is gone, or a lone write failed: nothing to separate
        } catch {
            var results: [Result<DeviceUpsertOutcome, any Error>] = []
            var lost: (any Error)?
            for item in items {
                if let lost {
                    results.append(.failure(lost))
                    continue
                }
                do {
                    results.append(.success(try await write([item])[0]))
                } catch {
                    // Once the database is gone, the rest of the batch fails at once instead of one timeout each.
                    if StoreError(classifying: error)?.code == .unreachable { lost = error }
                    results.append(.failure(error))
                }
            }
            return results
        }
    }

    /// A writer steps down (`waiting`: its registration, still queued, waits again): the role goes to the next
    /// registration waiting, if any.
    private func retire(waiting: (id: UInt64, continuation: CheckedContinuation<Turn, Never>)? = nil) {
        let next = state.withLock { state -> CheckedContinuation<Turn, Never>? in
            state.writers -= 1
            if let waiting, let index = state.queue.firstIndex(where: { $0.id == waiting.id }) {
                state.queue[index].continuation = waiting.continuation
            }
            return Self.nextWriter(&state, maxWriters: maxWriters)
        }
        next?.resume(returning: .write)
    }

    /// The first waiting registration whose device neither a batch nor a writer's own registration holds, made a
    /// writer (its continuation taken).
    private static func nextWriter(_ state: inout State, maxWriters: Int) -> CheckedContinuation<Turn, Never>? {
        guard state.writers < maxWriters else { return nil }
        var held = state.writing
        var found: Int?
        for (index, waiting) in state.queue.enumerated() {
            let device = waiting.item.registration.deviceID
            if waiting.continuation != nil && !held.contains(device) {
                found = index
                break
            }
            held.insert(device)
        }
        guard let index = found else { return nil }
        state.writers += 1
        defer { state.queue[index].continuation = nil }
        return state.queue[index].continuation
    }

    /// The next batch in arrival order, at most one registration per device, of registrations waiting and the
    /// writer's own (other writers' own registrations are theirs to take); nil when nothing can be taken now.
    private func takeBatch(writer id: UInt64) -> [Waiting]? {
        state.withLock { state -> [Waiting]? in
            var batch: [Waiting] = []
            var rest: [Waiting] = []
            var held = Set<String>()  // devices this batch takes or that an earlier waiting registration holds back
            for waiting in state.queue {
                let device = waiting.item.registration.deviceID
                let takeable = waiting.continuation != nil || waiting.id == id
                if takeable, batch.count < maxBatch, !state.writing.contains(device), held.insert(device).inserted {
                    batch.append(waiting)
                    state.writing.insert(device)
                } else {
                    held.insert(device)
                    rest.append(waiting)
                }
            }
            state.queue = rest
            return batch.isEmpty ? nil : batch
        }
    }

    private func finished(_ batch: [Waiting]) {
        state.withLock { state in
            for waiting in batch { state.writing.remove(waiting.item.registration.deviceID) }
        }
    }
}
