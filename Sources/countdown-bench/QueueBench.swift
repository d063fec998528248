import BlockingIO
import DelayQueue
import Dispatch
import Foundation
import Redis

/// `countdown-bench queue <command>`: the pieces `scripts/bench-queue` runs against one Redis.
enum QueueBench {
    static let usage = """
        usage: countdown-bench queue <command> --redis URL --namespace NS [options]
          enqueue --jobs N [--payload-bytes 64]                  bulk-enqueue N delayed jobs; prints jobs/s
          worker [--batch 256] [--loops 4] [--lateness-file F]   claim, no-op, ack until SIGTERM
          drive --jobs N                                         enqueue N due jobs, wait until workers drained them
          steady [--rate 1000] [--seconds 5] [--delay-ms 1000]   enqueue at a steady rate, wait until drained
          memory --jobs N [--payload-bytes 64]                   Redis memory per delayed job
        """

    /// Runs a queue command; returns the exit code, or throws an error in `arguments`.
    static func run(_ arguments: [String]) async throws -> Int32 {
        guard let command = arguments.first else { throw BenchError("a queue command is required") }
        do {
            let options = try BenchOptions(Array(arguments.dropFirst()))
            let client = try RedisClient(url: try options.string("redis"), poolSize: 4)
            let queue = RedisDelayQueue(client: client, namespace: try options.string("namespace", default: "bench"))
            defer {
                queue.close()
                client.close()
            }
            switch command {
            case "enqueue": try await enqueue(queue, options: options)
            case "worker": try await QueueBenchWorker(queue: queue, options: options).run()
            case "drive": try await drive(queue, options: options)
            case "steady": try await steady(queue, options: options)
            case "memory": try await memory(queue, client: client, options: options)
            default: throw BenchError("unknown queue command \(command)")
            }
            return 0
        } catch let error as BenchError {
            throw error
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            return 1
        }
    }

    static func payload(_ options: BenchOptions) throws -> [UInt8] {
        [UInt8](repeating: UInt8(ascii: "x"), count: try options.int("payload-bytes", default: 64))
    }

    /// Enqueues `jobs` in pipelined chunks; returns the seconds it took.
    static func enqueueAll(_ queue: RedisDelayQueue, count: Int, prefix: String, payload: [UInt8], due: JobDue) async throws -> Double {
        let clock = ContinuousClock()
        let started = clock.now
        var start = 0
        while start < count {
            let end = min(start + 5_000, count)
            try await queue.enqueue((start..<end).map { NewJob(id: "\(prefix):\($0)", kind: "bench", payload: payload, due: due) })
            start = end
        }
        return (clock.now - started).seconds
    }

    static func enqueue(_ queue: RedisDelayQueue, options: BenchOptions) async throws {
        let count = try options.int("jobs")
        let seconds = try await enqueueAll(queue, count: count, prefix: "e", payload: try payload(options), due: .after(.seconds(3600)))
        printResult(["jobs": Double(count), "seconds": seconds, "rate": Double(count) / seconds])
    }

    static func drive(_ queue: RedisDelayQueue, options: BenchOptions) async throws {
        let count = try options.int("jobs")
        let clock = ContinuousClock()
        let started = clock.now
        _ = try await enqueueAll(queue, count: count, prefix: "d", payload: try payload(options), due: .now)
        try await waitUntilDrained(queue)
        let seconds = (clock.now - started).seconds
        printResult(["jobs": Double(count), "seconds": seconds, "rate": Double(count) / seconds])
    }

    static func steady(_ queue: RedisDelayQueue, options: BenchOptions) async throws {
        let rate = try options.int("rate", default: 1_000)
        let seconds = try options.int("seconds", default: 5)
        let delay = try options.int("delay-ms", default: 1_000)
        let payload = try payload(options)
        let total = rate * seconds
        let begin = Date()
        let clock = ContinuousClock()
        let origin = clock.now
        var sent = 0
        while sent < total {
            let elapsed = (clock.now - origin).seconds
            let target = min(total, Int(elapsed * Double(rate)) + 1)
            if target > sent {
                try await queue.enqueue((sent..<target).map { index in
                    let due = begin.addingTimeInterval(Double(index) / Double(rate) + Double(delay) / 1000)
                    return NewJob(id: "s:\(index)", kind: "bench", payload: payload, due: .at(due))
                })
                sent = target
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        try await waitUntilDrained(queue)
        printResult(["jobs": Double(total), "rate": Double(rate)])
    }

    static func memory(_ queue: RedisDelayQueue, client: RedisClient, options: BenchOptions) async throws {
        let count = try options.int("jobs")
        let before = try await usedMemory(client)
        let seconds = try await enqueueAll(queue, count: count, prefix: "m", payload: try payload(options), due: .after(.seconds(86_400)))
        let after = try await usedMemory(client)
        printResult(["jobs": Double(count), "bytes_per_job": Double(after - before) / Double(count), "enqueue_rate": Double(count) / seconds])
    }

    static func waitUntilDrained(_ queue: RedisDelayQueue) async throws {
        while true {
            let stats = try await queue.stats()
            if stats.delayed + stats.dueNow + stats.leased == 0 { return }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    static func usedMemory(_ client: RedisClient) async throws -> Int {
        let info = try await client.command("INFO", "memory").string ?? ""
        let line = info.split(separator: "\r\n").first { $0.hasPrefix("used_memory:") }
        return line.flatMap { Int($0.dropFirst("used_memory:".count)) } ?? 0
    }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
