import DelayQueue
import Foundation
import Redis
import TestSupport

/// A queue in a namespace of its own on the shared test Redis.
struct QueueFixture {
    let client: RedisClient
    let queue: RedisDelayQueue
    let namespace: String

    init(policy: RetryPolicy = RetryPolicy(), url: String = TestEnvironment.redisURL) throws {
        client = try RedisClient(url: url, poolSize: 8)
        namespace = TestEnvironment.uniqueName("dq")
        queue = RedisDelayQueue(client: client, namespace: namespace, policy: policy)
    }

    /// The server's clock (`TIME`), in epoch milliseconds.
    func serverNow() async throws -> Int64 {
        let parts = try await client.command("TIME").array ?? []
        return (parts[0].integer ?? 0) * 1000 + (parts[1].integer ?? 0) / 1000
    }

    func close() {
        queue.close()
        client.close()
    }
}

func job(_ id: String, kind: String = "start", payload: String = "", due: JobDue = .now) -> NewJob {
    NewJob(id: id, kind: kind, payload: Array(payload.utf8), due: due)
}

extension ClaimBatch {
    var ids: [String] { jobs.map(\.id) }
}

extension Date {
    var epochMilliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }
}
