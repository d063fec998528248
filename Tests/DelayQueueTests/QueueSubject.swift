import DelayQueue
import Foundation
import TestSupport
import Testing

/// A queue implementation the conformance suite runs against.
enum QueueImplementation: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case redis, inMemory

    var testDescription: String { rawValue }
}

/// One queue under test, in real time: `RedisDelayQueue` in a namespace of its own on the test Redis (its clock is
/// Redis `TIME`), or `InMemoryDelayQueue` on the system clock, so the same waits hold for both.
struct QueueSubject {
    let queue: any DelayQueue
    private let fixture: QueueFixture?

    init(_ implementation: QueueImplementation, policy: RetryPolicy = RetryPolicy()) throws {
        switch implementation {
        case .redis:
            let fixture = try QueueFixture(policy: policy)
            self.fixture = fixture
            queue = fixture.queue
        case .inMemory:
            fixture = nil
            queue = InMemoryDelayQueue(policy: policy)
        }
    }

    /// The queue's clock now (Redis `TIME`, or the system clock the fake reads).
    func now() async throws -> Date {
        guard let fixture else { return Date() }
        return Date(timeIntervalSince1970: Double(try await fixture.serverNow()) / 1000)
    }

    func close() { fixture?.close() }
}
