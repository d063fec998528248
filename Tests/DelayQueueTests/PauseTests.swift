import DelayQueue
import Foundation
import TestSupport
import Testing

/// Pausing kinds: the same behaviour from the Redis queue and the in-memory one.
@Suite struct PauseTests {
    /// Runs `body` against a fresh Redis queue and a fresh in-memory queue.
    static func both(_ body: (any DelayQueue) async throws -> Void) async throws {
        let fixture = try QueueFixture()
        defer { fixture.close() }
        try await body(fixture.queue)
        try await body(InMemoryDelayQueue())
    }

    @Test func pausedKindsStayDueAndAreClaimedAfterResume() async throws {
        try await Self.both { queue in
            try await queue.enqueue([job("start:a", kind: "start"), job("reminder:a", kind: "reminder"), job("start:b", kind: "start")])
            try await queue.pause(kinds: ["start"], reason: "wrong FCM project")
            let paused = try await queue.pausedKinds()
            #expect(paused.map(\.kind) == ["start"])
            #expect(paused.first?.reason == "wrong FCM project")
            let batch = try await queue.claim(max: 10, lease: .seconds(30))
            #expect(batch.ids == ["reminder:a"], "only the unpaused kind is claimed")
            #expect(try await queue.claim(max: 10, lease: .seconds(30)).items.isEmpty)
            let stats = try await queue.stats()
            #expect(stats.dueNow == 2, "paused jobs stay due")
            #expect(stats.paused == 2)
            #expect(try await queue.jobs(ids: ["start:a"])["start:a"].map { if case .waiting = $0.state { true } else { false } } == true)

            #expect(try await queue.resume(kinds: ["start"]) == 2)
            #expect(try await queue.pausedKinds().isEmpty)
            let resumed = try await queue.claim(max: 10, lease: .seconds(30))
            #expect(resumed.ids.sorted() == ["start:a", "start:b"])
            #expect(resumed.jobs.allSatisfy { $0.attempt == 1 }, "a paused job's attempts are untouched")
            #expect(try await queue.stats().paused == 0)
        }
    }

    @Test func resumeWithoutKindsResumesEverything() async throws {
        try await Self.both { queue in
            try await queue.enqueue([job("start:a", kind: "start"), job("end:a", kind: "end")])
            try await queue.pause(kinds: ["start", "end"], reason: "")
            #expect(try await queue.claim(max: 10, lease: .seconds(30)).items.isEmpty)
            try await queue.resume(kinds: ["end"])
            #expect(try await queue.claim(max: 10, lease: .seconds(30)).ids == ["end:a"])
            try await queue.resume(kinds: [])
            #expect(try await queue.claim(max: 10, lease: .seconds(30)).ids == ["start:a"])
        }
    }

    @Test func pausedJobsCanBeReplacedAndCancelled() async throws {
        try await Self.both { queue in
            try await queue.enqueue([job("start:a", kind: "start"), job("start:b", kind: "start")])
            try await queue.pause(kinds: ["start"], reason: "")
            _ = try await queue.claim(max: 10, lease: .seconds(30))
            #expect(try await queue.cancel(["start:a"]) == 1)
            try await queue.enqueue(job("start:b", kind: "start", payload: "new"))
            _ = try await queue.claim(max: 10, lease: .seconds(30))
            try await queue.resume(kinds: [])
            let batch = try await queue.claim(max: 10, lease: .seconds(30))
            #expect(batch.ids == ["start:b"])
            #expect(batch.jobs.first?.payload == Array("new".utf8))
        }
    }

    @Test func pauseNeedsAKind() async throws {
        try await Self.both { queue in
            await #expect(throws: DelayQueueError.self) { try await queue.pause(kinds: [], reason: "") }
        }
    }

    /// A long backlog of a paused kind is held aside a few thousand at a time; what is behind it is still claimed.
    @Test func aLongPausedBacklogDoesNotHideOtherKinds() async throws {
        let fixture = try QueueFixture()
        defer { fixture.close() }
        let queue = fixture.queue
        let now = Date(timeIntervalSince1970: Double(try await fixture.serverNow()) / 1000)
        try await queue.enqueue((0..<6000).map { job("start:\($0)", kind: "start", due: .at(now.addingTimeInterval(-60))) })
        try await queue.enqueue(job("end:s", kind: "end", due: .at(now.addingTimeInterval(-30))))
        try await queue.pause(kinds: ["start"], reason: "")
        var claimed: [String] = []
        for _ in 0..<3 where claimed.isEmpty {
            claimed = try await queue.claim(max: 10, lease: .seconds(30)).ids
        }
        #expect(claimed == ["end:s"])
        #expect(try await queue.stats().paused == 6000)
        #expect(try await queue.resume(kinds: ["start"]) == 6000)
    }
}
