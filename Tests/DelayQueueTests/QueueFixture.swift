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

/// Shows that nothing comes back from `queue` up to `delay` from now, without sleeping: enqueues a `marker` job due
/// `delay` from now (on the queue's clock) and claims until it comes out, then acks it. Every claim first takes back
/// the leases that have run out, so the claims returned (the last one holds the marker) are everything the queue
/// handed out until then.
func claimMarker(_ queue: any DelayQueue, dueAfter delay: Duration) async throws -> [ClaimBatch] {
    try await queue.enqueue(job("marker", kind: "marker", due: .after(delay)))
    var claims: [ClaimBatch] = []
    try await waitUntil(timeout: .seconds(15), "the marker to come due") {
        claims.append(try await queue.claim(max: 10, lease: .seconds(30)))
        return claims.last?.ids.contains("marker") == true
    }
    if let marker = claims.last?.jobs.first(where: { $0.id == "marker" }) { try await queue.ack(marker.lease) }
    return claims
}

extension ClaimBatch {
    var ids: [String] { jobs.map(\.id) }
}

extension Date {
    var epochMilliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }
}
