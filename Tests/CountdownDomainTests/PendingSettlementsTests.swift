import CountdownDomain
import Testing

@Suite struct PendingSettlementsTests {
    @Test func batchesAreTakenOneAtATimeOldestFirst() {
        var pending = PendingSettlements<Int>(maxBatch: 2)
        _ = pending.submit([1, 2, 3])
        #expect(pending.takeBatch() == [1, 2])
        #expect(pending.takeBatch() == nil, "one batch is written at a time")
        _ = pending.committed()
        #expect(pending.takeBatch() == [3])
        _ = pending.committed()
        #expect(pending.takeBatch() == nil)
        #expect(pending.count == 0)
    }

    @Test func aFailedBatchGoesBackToTheFrontAndBacksOff() {
        var pending = PendingSettlements<Int>(maxBatch: 2)
        let ticket = pending.submit([1, 2, 3])
        #expect(pending.backoff == .zero)
        #expect(pending.takeBatch() == [1, 2])
        pending.failed()
        #expect(pending.count == 3, "nothing is dropped")
        #expect(pending.backoff == .milliseconds(50))
        #expect(pending.takeBatch() == [1, 2])
        pending.failed()
        #expect(pending.backoff == .milliseconds(100))
        for _ in 0..<20 {
            _ = pending.takeBatch()
            pending.failed()
        }
        #expect(pending.backoff == .seconds(5), "the backoff is capped")
        #expect(pending.takeBatch() == [1, 2])
        let none = pending.committed()
        #expect(none == [])
        #expect(pending.backoff == .zero, "a commit resets the backoff")
        #expect(pending.takeBatch() == [3])
        let done = pending.committed()
        #expect(done == [ticket])
    }

    @Test func aTicketCompletesOnceClosedAndAllItsItemsAreCommitted() {
        var pending = PendingSettlements<String>(maxBatch: 10)
        let first = pending.openTicket()
        let second = pending.openTicket()
        pending.add(["a1"], to: first)
        pending.add(["b1"], to: second)
        #expect(pending.takeBatch() == ["a1", "b1"])
        let early = pending.committed()
        #expect(early == [], "neither ticket is closed yet")
        pending.add(["a2"], to: first)
        let firstComplete = pending.close(first)
        let secondComplete = pending.close(second)
        #expect(!firstComplete)
        #expect(secondComplete, "everything of the second ticket was committed")
        #expect(pending.takeBatch() == ["a2"])
        let completed = pending.committed()
        #expect(completed == [first])
        let empty = pending.openTicket()
        let emptyComplete = pending.close(empty)
        #expect(emptyComplete, "an empty ticket is complete at once")
    }
}
