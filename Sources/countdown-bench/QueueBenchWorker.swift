import BlockingIO
import DelayQueue
import Dispatch
import Foundation

/// A worker process with a no-op handler: `loops` claim loops of up to `batch` jobs, one ack call per batch,
/// until SIGTERM; optionally writes each job's lateness (handler start − due time, ms) to a file.
struct QueueBenchWorker {
    let queue: RedisDelayQueue
    let batch: Int
    let loops: Int
    let latenessFile: String?

    init(queue: RedisDelayQueue, options: BenchOptions) throws {
        self.queue = queue
        batch = try options.int("batch", default: 256)
        loops = try options.int("loops", default: 4)
        latenessFile = try? options.string("lateness-file")
    }

    func run() async throws {
        let stopping = Locked(false)
        let lateness = Locked<[Double]>([])
        signal(SIGTERM, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGTERM, queue: .global())
        let queue = self.queue
        source.setEventHandler {
            stopping.withLock { $0 = true }
            queue.close()
        }
        source.resume()
        let record = latenessFile != nil
        let batch = self.batch
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<loops {
                group.addTask {
                    while !stopping.value {
                        let claimed = try await queue.claim(max: batch, lease: .seconds(30))
                        let jobs = claimed.jobs
                        if record {
                            let now = Date()
                            let late = jobs.map { now.timeIntervalSince($0.dueAt) * 1000 }
                            lateness.withLock { $0.append(contentsOf: late) }
                        }
                        if !jobs.isEmpty { try await queue.ack(jobs.map(\.lease)) }
                        if claimed.items.isEmpty {
                            try await queue.waitForWork(timeout: claimed.idleWait(maxIdle: .milliseconds(200)))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        source.cancel()
        if let latenessFile {
            let text = lateness.value.map { String(format: "%.3f", $0) }.joined(separator: "\n")
            try text.write(toFile: latenessFile, atomically: true, encoding: .utf8)
        }
    }
}
