import BlockingIO
import Testing

@Suite struct ConnectionThreadTests {
    /// A numbered connection that can be marked broken; it records its number in `dropped` when released.
    final class Connection: @unchecked Sendable {
        let number: Int
        let dropped: Locked<[Int]>
        var broken = false

        init(number: Int, dropped: Locked<[Int]>) {
            self.number = number
            self.dropped = dropped
        }

        deinit { dropped.withLock { $0.append(number) } }
    }

    /// A holder whose connections are numbered from 1; opening throws while `failing` holds true.
    static func holder(failing: Locked<Bool> = Locked(false), dropped: Locked<[Int]> = Locked([])) -> ConnectionThread<Connection> {
        let opened = Locked(0)
        return ConnectionThread(name: "connection-thread-test", open: {
            if failing.withLock({ $0 }) { throw CancellationError() }
            return Connection(number: opened.withLock { count in
                count += 1
                return count
            }, dropped: dropped)
        }, isUsable: { !$0.broken })
    }

    /// The number of the connection `connected()` gives, whether it is fresh, and the generation after it.
    static func connect(_ holder: ConnectionThread<Connection>) async throws -> (number: Int, fresh: Bool, generation: Int) {
        try await holder.run { slot in
            let (connection, fresh) = try slot.connected()
            return (connection.number, fresh, slot.generation)
        }
    }

    @Test func opensOnFirstUseKeepsAUsableConnectionAndReplacesABrokenOne() async throws {
        let holder = Self.holder()
        #expect(try await holder.run { $0.connection == nil && $0.generation == 0 }, "nothing opens before it is needed")
        #expect(try await Self.connect(holder) == (1, true, 1))
        #expect(try await Self.connect(holder) == (1, false, 1))
        try await holder.run { $0.connection?.broken = true }
        #expect(try await Self.connect(holder) == (2, true, 2))
        holder.close()
    }

    @Test func aFailedOpenKeepsNothingAndTheNextUseTriesAgain() async throws {
        let failing = Locked(true)
        let holder = Self.holder(failing: failing)
        await #expect(throws: CancellationError.self) { try await Self.connect(holder) }
        #expect(try await holder.run { $0.connection == nil && $0.generation == 0 })
        failing.withLock { $0 = false }
        #expect(try await Self.connect(holder) == (1, true, 1))
        holder.close()
    }

    @Test func aReplacedConnectionIsReleasedAndCloseReleasesTheLast() async throws {
        let dropped = Locked<[Int]>([])
        let holder = Self.holder(dropped: dropped)
        _ = try await Self.connect(holder)
        #expect(dropped.withLock { $0 } == [])
        try await holder.run { $0.connection?.broken = true }
        _ = try await Self.connect(holder)
        #expect(dropped.withLock { $0 } == [1], "a broken connection is released when replaced")
        holder.close()
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while dropped.withLock({ $0 }) != [1, 2] && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(dropped.withLock { $0 } == [1, 2], "close() releases the connection held")
    }
}
