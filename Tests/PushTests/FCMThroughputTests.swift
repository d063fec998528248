import Foundation
import Push
import Testing

/// Pushes per second through the real FCM transport against `countdown-fake-fcm`. Opt-in (`COUNTDOWN_PUSH_BENCH=1`):
/// it takes a while and its numbers only mean something on a quiet machine.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["COUNTDOWN_PUSH_BENCH"] != nil))
struct FCMThroughputTests {
    static func measure(latencyMilliseconds: Int, count: Int, concurrency: Int) async throws -> Double {
        let harness = try await FCMHarness.make(latencyMilliseconds: latencyMilliseconds, maxConnections: concurrency)
        _ = await harness.transport.sendAll((0..<concurrency).map { FCMHarness.liveActivity(token: "ok-warm-\($0)") })
        let messages = (0..<count).map { FCMHarness.liveActivity(token: "ok-\($0)") }
        let clock = ContinuousClock()
        let started = clock.now
        let cpuBefore = Self.processCPUSeconds()
        var results: [PushResult] = []
        for start in stride(from: 0, to: count, by: concurrency) {
            results += await harness.transport.sendAll(Array(messages[start..<min(start + concurrency, count)]))
        }
        let elapsed = clock.now - started
        let cpuMicrosecondsPerPush = (Self.processCPUSeconds() - cpuBefore) * 1e6 / Double(count)
        #expect(results.allSatisfy { $0.label == "accepted" })
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = Double(count) / seconds
        print("FCM push throughput: latency \(latencyMilliseconds) ms, concurrency \(concurrency): \(count) pushes in \(String(format: "%.2f", seconds)) s = \(Int(rate))/s, client CPU \(Int(cpuMicrosecondsPerPush)) µs/push")
        return rate
    }

    /// User + system CPU time of this process (the fake is a separate process).
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    @Test func withoutLatency() async throws {
        _ = try await Self.measure(latencyMilliseconds: 0, count: 20_000, concurrency: 64)
    }

    @Test func withFiftyMillisecondsLatency() async throws {
        let concurrency = ProcessInfo.processInfo.environment["COUNTDOWN_PUSH_BENCH_CONCURRENCY"].flatMap(Int.init) ?? 256
        _ = try await Self.measure(latencyMilliseconds: 50, count: 20_000, concurrency: concurrency)
    }
}
