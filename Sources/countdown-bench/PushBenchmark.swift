import Foundation
import HTTPClient
import JWT
import Push
import PushPayloads
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `countdown-bench push`: start pushes per second from one process through the real FCM path (service
/// account, OAuth token exchange, `FCMTransport` over `HTTPClient`) to `countdown-fake-fcm`, and what they cost
/// this process in CPU and memory.
struct PushBenchmark {
    struct Options: Sendable, Equatable {
        var fakeBaseURL = ""
        var accountPath = ""
        var count = 100_000
        var concurrency = 256
        /// Messages built at once (sent in batches of `concurrency`); bounds what is held in memory at once.
        var chunk = 10_000
        var json = false
    }

    /// What one run measured.
    struct Figures: Codable {
        var count: Int
        var concurrency: Int
        var seconds: Double
        /// Accepted pushes per second.
        var pushesPerSecond: Double
        /// User + system CPU of this process during the run.
        var cpuSeconds: Double
        var cpuSecondsPer1k: Double
        /// Resident memory after the warm-up, the most during the run, and at its end (MiB).
        var rssStartMiB: Double
        var rssPeakMiB: Double
        var rssEndMiB: Double
        /// Resident memory after each tenth of the pushes (MiB).
        var rssByTenthMiB: [Double]
        /// Whether the kernel's high-water mark was reset after the warm-up (else `rssPeakMiB` is the largest sample).
        var peakIsKernelHighWaterMark: Bool
        /// Results by `PushResult.label`.
        var results: [String: Int]

        var accepted: Int { results["accepted"] ?? 0 }
    }

    static let usage = """
        usage: countdown-bench push --fake <baseURL> --account <service-account.json> [--count N] [--concurrency C] [--chunk K] [--json]

          --fake <baseURL>       countdown-fake-fcm, e.g. http://127.0.0.1:9099 (also the FCM base URL)
          --account <file>       service account whose token_uri points at the fake
          --count N              pushes to send after the warm-up (default 100000)
          --concurrency C        pushes in flight at once, and HTTP connections (default 256)
          --chunk K              pushes built and sent per batch (default 10000)
          --json                 print the figures as one JSON object
        Exit codes: 0 every push accepted, 1 some failed or the run could not start, 2 usage error.
        """

    let options: Options

    /// Runs the command; returns the exit code, or throws an error in `arguments`.
    static func main(_ arguments: [String]) async throws -> Int32 {
        let options = try Options.parse(arguments)
        do {
            let figures = try await PushBenchmark(options: options).run()
            print(options.json ? figures.jsonText : figures.text(target: options.fakeBaseURL))
            return figures.accepted == figures.count ? 0 : 1
        } catch {
            FileHandle.standardError.write(Data("countdown-bench push: \(error)\n".utf8))
            return 1
        }
    }

    func run() async throws -> Figures {
        let account = try ServiceAccount.load(file: options.accountPath)
        let http = try HTTPClient(configuration: HTTPClientConfiguration(
            name: "bench-fcm", requestTimeout: .seconds(30), maxConnections: options.concurrency))
        defer { http.shutdown() }
        let tokens = try FCMAccessTokenProvider(account: account, http: http)
        let transport = FCMTransport(projectID: account.projectID, baseURL: options.fakeBaseURL, tokens: tokens, http: http)
        let payload = try StartPush(now: Date())

        // Warm-up: the access token and every connection, not measured.
        let warm = await transport.sendAll((0..<options.concurrency).map { payload.message(-1 - $0) })
        if let refused = warm.first(where: { $0.label != "accepted" }) {
            throw BenchError("warm-up push was not accepted: \(refused)")
        }
        let peakReset = ProcessMemory.resetPeak()
        let rssStart = ProcessMemory.residentMiB()
        let cpuBefore = ProcessUsage.cpuSeconds(pid: getpid()) ?? 0
        let clock = ContinuousClock()
        let started = clock.now

        var results: [String: Int] = [:]
        var rssByTenth: [Double] = []
        var sent = 0
        while sent < options.count {
            let size = min(options.chunk, options.count - sent)
            let messages = (sent..<(sent + size)).map(payload.message)
            // Batches of `concurrency`, one after the other, each handed to the HTTP client at once as the worker does.
            for start in stride(from: 0, to: size, by: options.concurrency) {
                for result in await transport.sendAll(Array(messages[start..<min(start + options.concurrency, size)])) {
                    results[result.label, default: 0] += 1
                }
            }
            sent += size
            while rssByTenth.count < sent * 10 / options.count { rssByTenth.append(ProcessMemory.residentMiB()) }
        }

        let seconds = (clock.now - started).seconds
        let cpu = (ProcessUsage.cpuSeconds(pid: getpid()) ?? 0) - cpuBefore
        let rssEnd = ProcessMemory.residentMiB()
        let samplePeak = ([rssStart, rssEnd] + rssByTenth).max() ?? rssEnd
        let accepted = results["accepted"] ?? 0
        return Figures(
            count: options.count, concurrency: options.concurrency, seconds: seconds,
            pushesPerSecond: Double(accepted) / max(seconds, 1e-9), cpuSeconds: cpu, cpuSecondsPer1k: cpu * 1000 / Double(options.count),
            rssStartMiB: rssStart, rssPeakMiB: peakReset ? max(ProcessMemory.peakMiB(), samplePeak) : samplePeak, rssEndMiB: rssEnd,
            rssByTenthMiB: rssByTenth, peakIsKernelHighWaterMark: peakReset, results: results)
    }
}

extension PushBenchmark.Options {
    static func parse(_ arguments: [String]) throws -> Self {
        let given = try BenchOptions(arguments, flags: ["json"], known: ["fake", "account", "count", "concurrency", "chunk"])
        var options = Self()
        options.fakeBaseURL = try given.string("fake", default: "")
        options.accountPath = try given.string("account", default: "")
        options.count = try given.int("count", default: options.count, in: 1...100_000_000)
        options.concurrency = try given.int("concurrency", default: options.concurrency, in: 1...4096)
        options.chunk = try given.int("chunk", default: options.chunk, in: 1...1_000_000)
        options.json = given.has("json")
        guard options.fakeBaseURL.hasPrefix("http://") || options.fakeBaseURL.hasPrefix("https://") else {
            throw BenchError("--fake must be the fake's http(s) base URL")
        }
        guard !options.accountPath.isEmpty else { throw BenchError("--account is required") }
        return options
    }
}

extension PushBenchmark.Figures {
    var jsonText: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: (try? encoder.encode(self)) ?? Data("{}".utf8), as: UTF8.self)
    }

    func text(target: String) -> String {
        func mib(_ value: Double) -> String { String(format: "%.1f", value) }
        return """
            \(count) start pushes to \(target), concurrency \(concurrency)
              time          \(String(format: "%.2f", seconds)) s
              throughput    \(Int(pushesPerSecond.rounded())) accepted pushes/s
              CPU           \(String(format: "%.2f", cpuSeconds)) s user+system = \(String(format: "%.3f", cpuSecondsPer1k)) s per 1k pushes
              memory (RSS)  start \(mib(rssStartMiB)) MiB, peak \(mib(rssPeakMiB)) MiB, end \(mib(rssEndMiB)) MiB
              RSS by tenth  \(rssByTenthMiB.map(mib).joined(separator: " "))
              results       \(results.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
            """
    }
}

/// A push-to-start message as the worker builds it (`PushPayloadBuilder`): the start payload of a stream an hour
/// away (Turkish texts, three names, creator role), `apns-priority: 10`, `apns-expiration` at the planned start,
/// and tokens unique to each push.
struct StartPush: Sendable {
    let payload: LiveActivityPayload

    init(now: Date) throws {
        let stream = StreamSnapshot(
            id: "65f000000000000000000001", title: "Akşam Sohbeti: Yeni Albüm", plannedStartAt: now.addingTimeInterval(3600),
            creatorName: "Selin Kaya", guestNames: ["Mert Demir", "Ayşe Yılmaz"])
        payload = try PushPayloadBuilder().start(stream, role: .creator, language: .tr, now: now)
    }

    func message(_ index: Int) -> PushMessage {
        let hex = String(UInt64(bitPattern: Int64(index)), radix: 16)
        let activityToken = String(repeating: "0", count: max(0, 64 - hex.count)) + hex
        return .liveActivity(
            id: "start", fcmToken: "bench-fcm-\(index)", activityToken: activityToken, apnsHeaders: payload.apnsHeaders, apsJSON: payload.apsJSON)
    }
}

/// This process's resident memory, from `/proc/<pid>/status`.
enum ProcessMemory {
    static func residentMiB() -> Double { Double(ProcessUsage.of(pid: getpid())?.residentKB ?? 0) / 1024 }

    /// The most resident memory since the start or the last `resetPeak`.
    static func peakMiB() -> Double { Double(ProcessUsage.of(pid: getpid())?.peakResidentKB ?? 0) / 1024 }

    /// Resets the kernel's high-water mark (`5` to `/proc/self/clear_refs`); false where that is not allowed.
    static func resetPeak() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        do {
            try handle.write(contentsOf: Data("5".utf8))
            return true
        } catch {
            return false
        }
    }
}
