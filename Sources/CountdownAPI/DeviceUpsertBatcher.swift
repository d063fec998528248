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
    public typealias Item = DeviceOwnershipStore.Item

    private struct Waiting {
        let item: Item
        let continuation: CheckedContinuation<DeviceUpsertOutcome, any Error>
    }

    private struct State {
        var queue: [Waiting] = []
        var writers = 0
        /// Devices in a batch being written: a later registration of one waits, so the last one sent wins.
        var writing = Set<String>()
    }

    /// Most registrations in one statement.
    public let maxBatch: Int
    /// Batches written at the same time (each on its own pooled connection).
    public let maxWriters: Int
    private let write: @Sendable ([Item]) async throws -> [DeviceUpsertOutcome]
    private let writeOne: @Sendable (Item) async throws -> DeviceUpsertOutcome
    private let state = Locked(State())

    /// - Parameters:
    ///   - write: writes a batch (one transaction) and returns each item's outcome, in order; `writeOne` writes a
    ///     single registration after a batch failed.
    public init(maxBatch: Int = 256, maxWriters: Int = 2,
                write: @escaping @Sendable ([Item]) async throws -> [DeviceUpsertOutcome],
                writeOne: @escaping @Sendable (Item) async throws -> DeviceUpsertOutcome) {
        precondition(maxBatch > 0 && maxWriters > 0)
        self.maxBatch = maxBatch
        self.maxWriters = maxWriters
        self.write = write
        self.writeOne = writeOne
    }

    /// Registrations waiting for a batch (not counting those being written).
    public var waiting: Int { state.withLock { $0.queue.count } }

    /// Writes `registration` (with the next batch); returns its outcome once it is committed.
    @discardableResult
    public func submit(_ registration: DeviceRegistration, userID: String?) async throws -> DeviceUpsertOutcome {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<DeviceUpsertOutcome, any Error>) in
            let startWriter = state.withLock { state -> Bool in
                state.queue.append(Waiting(item: Item(registration: registration, userID: userID), continuation: continuation))
                guard state.writers < maxWriters else { return false }
                state.writers += 1
                return true
            }
            if startWriter { Task { await self.drain() } }
        }
    }

    /// Writes batches until nothing waits.
    private func drain() async {
        while let batch = takeBatch() {
            defer { finished(batch) }
            do {
                let outcomes = try await write(batch.map(\.item))
                precondition(outcomes.count == batch.count, "a batch write must return one outcome per item")
                for (waiting, outcome) in zip(batch, outcomes) { waiting.continuation.resume(returning: outcome) }
            } catch where StoreError(classifying: error)?.code == .unreachable {
                for waiting in batch { waiting.continuation.resume(throwing: error) }
            } catch where batch.count == 1 {
                batch[0].continuation.resume(throwing: error)  // its own write failed: nothing to separate
            } catch {
                var lost: (any Error)?
                for waiting in batch {
                    if let lost {
                        waiting.continuation.resume(throwing: lost)
                        continue
                    }
                    do {
                        waiting.continuation.resume(returning: try await writeOne(waiting.item))
                    } catch {
                        // Once the database is gone, the rest of the batch fails at once instead of one timeout each.
                        if StoreError(classifying: error)?.code == .unreachable { lost = error }
                        waiting.continuation.resume(throwing: error)
                    }
                }
            }
        }
    }

    /// The next batch in arrival order, at most one registration per device; nil (and this writer retires)
    /// when the queue is empty.
    private func takeBatch() -> [Waiting]? {
        state.withLock { state -> [Waiting]? in
            guard !state.queue.isEmpty else {
                state.writers -= 1
                return nil
            }
            var batch: [Waiting] = []
            var rest: [Waiting] = []
            var held = Set<String>()  // devices this batch takes or that an earlier waiting registration holds back
            for waiting in state.queue {
                let device = waiting.item.registration.deviceID
                if batch.count < maxBatch, !state.writing.contains(device), held.insert(device).inserted {
                    batch.append(waiting)
                    state.writing.insert(device)
                } else {
                    held.insert(device)
                    rest.append(waiting)
                }
            }
            state.queue = rest
            guard !batch.isEmpty else {
                // Everything waiting is held back by batches other writers are writing; they will take it.
                state.writers -= 1
                return nil
            }
            return batch
        }
    }

    private func finished(_ batch: [Waiting]) {
        state.withLock { state in
            for waiting in batch { state.writing.remove(waiting.item.registration.deviceID) }
        }
    }
}
