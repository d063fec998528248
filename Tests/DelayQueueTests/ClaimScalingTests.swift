@testable import DelayQueue
import Foundation
import Redis
import TestSupport
import Testing

@Suite struct ClaimScalingTests {
    /// Claim cost must not grow with the number of delayed jobs: measured at 1k and at 1M far-future jobs.
    @Test(.timeLimit(.minutes(5))) func claimCostIsFlatFromOneThousandToOneMillionDelayedJobs() async throws {
        let server = try await ThrowawayRedis.start(extraArguments: ["--appendonly", "no"])
        let fixture = try QueueFixture(url: server.url)
        defer { fixture.close() }
        let keys = QueueKeys(namespace: fixture.namespace)

        try await fill(fixture, keys: keys, from: 0, to: 1_000)
        let small = try await claimCost(fixture, round: "small")
        try await fill(fixture, keys: keys, from: 1_000, to: 1_000_000)
        #expect(try await fixture.queue.stats().delayed == 1_000_000)
        let large = try await claimCost(fixture, round: "large")
        let ratio = large / small
        #expect(ratio < 3, "claim cost per job at 1k: \(small) µs, at 1M: \(large) µs (ratio \(ratio))")
        await server.stopInBackground()
    }

    /// Adds far-future jobs (64-byte payloads) directly on the server, 20,000 per script call.
    private func fill(_ fixture: QueueFixture, keys: QueueKeys, from: Int, to: Int) async throws {
        let script = RedisScript(name: "test.fill", source: """
            local payload = 'fill' .. string.char(0) .. string.rep('x', 64)
            local due = tonumber(ARGV[3])
            local scored, fields = {}, {}
            for i = tonumber(ARGV[1]), tonumber(ARGV[2]) - 1 do
              local id = 'far:' .. i
              scored[#scored + 1] = due + i
              scored[#scored + 1] = id
              fields[#fields + 1] = id
              fields[#fields + 1] = payload
              if #scored >= 1000 then
                redis.call('ZADD', KEYS[1], unpack(scored))
                redis.call('HSET', KEYS[2], unpack(fields))
                scored, fields = {}, {}
              end
            end
            if #scored > 0 then
              redis.call('ZADD', KEYS[1], unpack(scored))
              redis.call('HSET', KEYS[2], unpack(fields))
            end
            return 1
            """)
        let farFuture = Int64(Date().timeIntervalSince1970 * 1000) + 86_400_000
        var start = from
        while start < to {
            let end = min(start + 20_000, to)
            try await fixture.client.run(
                script: script, keys: [keys.due, keys.data],
                args: [RedisArgument(start), RedisArgument(end), RedisArgument(farFuture)])
            start = end
        }
    }

    /// Server time per claimed job (microseconds of `EVALSHA` in `INFO commandstats`, which measures the claim
    /// script itself rather than this debug-built client or other work on the machine): the median of several
    /// rounds of enqueue 500 due jobs, claim them 50 at a time, then ack them.
    private func claimCost(_ fixture: QueueFixture, round: String) async throws -> Double {
        var perJob: [Double] = []
        for repetition in 0..<7 {
            try await fixture.queue.enqueue((0..<500).map { job("\(round):\(repetition):\($0)", payload: String(repeating: "p", count: 64)) })
            let before = try await scriptMicroseconds(fixture)
            var leases: [JobLease] = []
            while leases.count < 500 {
                let batch = try await fixture.queue.claim(max: 50, lease: .seconds(60))
                if batch.items.isEmpty { break }
                leases += batch.jobs.map(\.lease)
            }
            let spent = try await scriptMicroseconds(fixture) - before
            #expect(leases.count == 500)
            try await fixture.queue.ack(leases)
            perJob.append(spent / Double(max(leases.count, 1)))
        }
        return perJob.sorted()[perJob.count / 2]
    }

    private func scriptMicroseconds(_ fixture: QueueFixture) async throws -> Double {
        let stats = try await fixture.client.command("INFO", "commandstats").string ?? ""
        guard let line = stats.split(separator: "\r\n").first(where: { $0.hasPrefix("cmdstat_evalsha:") }),
              let usec = line.split(separator: ",").first(where: { $0.hasPrefix("usec=") })?.dropFirst(5) else { return 0 }
        return Double(usec) ?? 0
    }
}
