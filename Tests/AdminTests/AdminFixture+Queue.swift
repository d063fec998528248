import CountdownAdmin
import CountdownCommands
import CountdownDomain
import CountdownStore
import CountdownMaintenance
import DelayQueue
import Foundation
import Redis

/// Jobs arranged in, and read back from, the fixture's queue.
extension AdminFixture {
    /// The start, reminder and expire jobs of a scheduled stream, waiting (as the relay would have queued them).
    func queuePreStartJobs(_ stream: String) async throws {
        let jobs: [CountdownJob] = [.start(stream: stream), .reminder(stream: stream), .expire(stream: stream)]
        try await queue.enqueue(jobs.map { NewJob(id: $0.id, kind: $0.kind.rawValue, payload: $0.payload, due: .after(.seconds(600))) })
    }

    /// The queue's view of `ids` (absent ids are missing).
    func jobs(_ ids: [String]) async throws -> [String: JobInfo] {
        try await queue.jobs(ids: ids)
    }

    /// A job of a kind no handler knows, claimed and failed under a one-attempt policy, so it is a dead letter
    /// now, exactly as a worker leaves one. Call it while nothing else in the queue is due.
    func deadLetter(_ id: String, error: String = "no handler for kind mystery") async throws {
        let strict = RedisDelayQueue(client: redis, namespace: namespace, policy: RetryPolicy(maxAttempts: 1))
        defer { strict.close() }
        try await strict.enqueue(NewJob(id: id, kind: "mystery", payload: Array(#"{"what":"unknown"}"#.utf8), due: .now))
        let claimed = try await strict.claim(max: 1, lease: .seconds(30)).jobs
        guard let job = claimed.first, job.id == id else { throw Unexpected("\(id) could not be claimed (got \(claimed.map(\.id)))") }
        guard try await strict.fail(job.lease, error: error) == .deadLettered else { throw Unexpected("\(id) was not dead-lettered") }
    }
}

/// An arrangement step that did not do what the test needs.
struct Unexpected: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
