import Foundation
import Testing

@testable import BlockingIO

final class Counter: @unchecked Sendable {
    var value = 0
    var healthy = true
}

@Suite struct ResourcePoolTests {
    @Test func neverExceedsMaxSizeAndReusesResources() async throws {
        let made = Locked(0)
        let pool = ResourcePool<Counter>(name: "t", maxSize: 3, factory: {
            made.withLock { $0 += 1 }
            return Counter()
        }, isHealthy: { $0.healthy })
        let inFlight = Locked((now: 0, peak: 0))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    try await pool.withResource { counter in
                        inFlight.withLock { $0.now += 1; $0.peak = max($0.peak, $0.now) }
                        counter.value += 1
                        Thread.sleep(forTimeInterval: 0.002)
                        inFlight.withLock { $0.now -= 1 }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(made.withLock { $0 } <= 3)
        #expect(inFlight.withLock { $0.peak } <= 3)
        #expect(inFlight.withLock { $0.peak } >= 2)
        pool.close()
    }

    @Test func unhealthyResourceIsReplaced() async throws {
        let made = Locked(0)
        let pool = ResourcePool<Counter>(name: "t", maxSize: 1, factory: {
            made.withLock { $0 += 1 }
            return Counter()
        }, isHealthy: { $0.healthy })
        struct Broken: Error {}
        await #expect(throws: Broken.self) {
            try await pool.withResource { counter in
                counter.healthy = false
                throw Broken()
            }
        }
        let value = try await pool.withResource { counter in counter.value }
        #expect(value == 0)
        #expect(made.withLock { $0 } == 2)
        pool.close()
    }

    @Test func runsOffTheCooperativePoolInOrder() async throws {
        let thread = SerialThread(name: "order")
        let seen = Locked([Int]())
        for index in 0..<100 { thread.submit { seen.withLock { $0.append(index) } } }
        let first = try await thread.run { UInt(bitPattern: Int(bitPattern: UInt(pthread_self()))) }
        let second = try await thread.run { UInt(bitPattern: Int(bitPattern: UInt(pthread_self()))) }
        #expect(first == second)
        #expect(seen.withLock { $0 } == Array(0..<100))
        thread.stop()
    }

    @Test func closedPoolRejectsUsers() async throws {
        let pool = ResourcePool<Counter>(name: "closed", maxSize: 1, factory: { Counter() }, isHealthy: { _ in true })
        pool.close()
        await #expect(throws: PoolClosedError.self) { try await pool.withResource { $0.value } }
    }
}
