import Foundation
import Synchronization

/// A bounded pool of thread-confined resources (database or Redis connections).
///
/// Each slot is a `ConnectionThread`; its resource is created, used and freed only on that thread.
/// A resource that reports itself unhealthy after use is dropped (its owner's `deinit` frees the C
/// handle) and the next user of the slot gets a fresh one, which is how clients reconnect after a
/// server restart.
public final class ResourcePool<Resource: AnyObject>: Sendable {
    public typealias Factory = @Sendable () throws -> Resource
    public typealias HealthCheck = @Sendable (Resource) -> Bool

    private typealias Slot = ConnectionThread<Resource>

    private struct State {
        var idle: [Slot] = []
        var created = 0
        var waiters: [CheckedContinuation<Slot, any Error>] = []
        var closed = false
    }

    public let maxSize: Int
    private let name: String
    private let factory: Factory
    private let isHealthy: HealthCheck
    private let state = Mutex(State())

    /// - Parameters:
    ///   - maxSize: the most resources (and threads) this pool ever holds.
    ///   - factory: opens a resource; runs on the slot's own thread and may block.
    ///   - isHealthy: asked after each use; `false` drops the resource.
    public init(name: String, maxSize: Int, factory: @escaping Factory, isHealthy: @escaping HealthCheck) {
        precondition(maxSize > 0, "pool size must be positive")
        self.name = name
        self.maxSize = maxSize
        self.factory = factory
        self.isHealthy = isHealthy
    }

    /// Runs `body` with a resource on that resource's own thread.
    public func withResource<T: Sendable>(_ body: @escaping @Sendable (Resource) throws -> T) async throws -> T {
        let slot = try await acquire()
        defer { release(slot) }
        let isHealthy = self.isHealthy
        return try await slot.run { slot in
            let resource = try slot.connected().connection
            defer { if !isHealthy(resource) { slot.connection = nil } }
            return try body(resource)
        }
    }

    /// Number of resources currently lent out.
    public var inUse: Int {
        state.withLock { $0.created - $0.idle.count }
    }

    /// Frees every idle resource and wakes waiters with `PoolClosedError`.
    public func close() {
        let (slots, waiters) = state.withLock { state -> ([Slot], [CheckedContinuation<Slot, any Error>]) in
            state.closed = true
            let slots = state.idle
            let waiters = state.waiters
            state.idle.removeAll()
            state.waiters.removeAll()
            return (slots, waiters)
        }
        for waiter in waiters { waiter.resume(throwing: PoolClosedError(pool: name)) }
        for slot in slots { slot.close() }
    }

    private enum Acquisition { case slot(Slot), create(Int), wait, closed }

    private func acquire() async throws -> Slot {
        let next: Acquisition = state.withLock { state in
            if state.closed { return .closed }
            if let slot = state.idle.popLast() { return .slot(slot) }
            if state.created < maxSize {
                state.created += 1
                return .create(state.created)
            }
            return .wait
        }
        switch next {
        case .slot(let slot): return slot
        case .create(let index): return Slot(name: "\(name)-\(index)", open: factory, isUsable: isHealthy)
        case .closed: throw PoolClosedError(pool: name)
        case .wait:
            return try await withCheckedThrowingContinuation { continuation in
                let resumeNow: Result<Slot, any Error>? = state.withLock { state in
                    if state.closed { return .failure(PoolClosedError(pool: name)) }
                    if let slot = state.idle.popLast() { return .success(slot) }
                    state.waiters.append(continuation)
                    return nil
                }
                if let resumeNow { continuation.resume(with: resumeNow) }
            }
        }
    }

    private func release(_ slot: Slot) {
        let waiter: CheckedContinuation<Slot, any Error>? = state.withLock { state in
            if !state.waiters.isEmpty { return state.waiters.removeFirst() }
            if state.closed {
                slot.close()
            } else {
                state.idle.append(slot)
            }
            return nil
        }
        waiter?.resume(returning: slot)
    }
}

/// Thrown to users of a pool that has been closed.
public struct PoolClosedError: Error, CustomStringConvertible {
    public let pool: String
    public var description: String { "pool \(pool) is closed" }
}
