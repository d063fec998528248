import Foundation
import HTTPClient
import TestSupport
import Testing

@Suite struct HTTPClientThroughputTests {
    /// Resident set size of this process in bytes (Linux /proc).
    static func residentBytes() -> Int {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = statm.split(separator: " ")
        return (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    static func post(_ count: Int, concurrency: Int, client: HTTPClient, url: String) async throws -> Int {
        let body = Array("{\"message\":{\"token\":\"abc\"}}".utf8)
        return try await withThrowingTaskGroup(of: Int.self) { group in
            var sent = 0
            var ok = 0
            for _ in 0..<min(concurrency, count) {
                group.addTask { try await client.send(HTTPRequest(method: .post, url: url, body: body)).status }
                sent += 1
            }
            while let status = try await group.next() {
                if status == 200 { ok += 1 }
                if sent < count {
                    group.addTask { try await client.send(HTTPRequest(method: .post, url: url, body: body)).status }
                    sent += 1
                }
            }
            return ok
        }
    }

    @Test func sustainsManySmallPostsWithFlatMemory() async throws {
        let server = try TestHTTPServer()
        let client = try HTTPClient(configuration: HTTPClientConfiguration(name: "throughput", maxConnections: 32))
        let url = server.baseURL + "/ok"
        _ = try await Self.post(5_000, concurrency: 64, client: client, url: url)  // warm up: connections, handle pool
        let before = Self.residentBytes()
        let cpuBefore = FCMThroughputTests.processCPUSeconds()
        let started = ContinuousClock.now
        let total = 30_000
        let ok = try await Self.post(total, concurrency: 64, client: client, url: url)
        let elapsed = ContinuousClock.now - started
        let growth = Self.residentBytes() - before
        let cpuPerRequest = Int((FCMThroughputTests.processCPUSeconds() - cpuBefore) * 1e6 / Double(total))
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("HTTPClient: \(total) POSTs in \(seconds) s = \(Int(Double(total) / seconds))/s, RSS growth \(growth / 1024) KiB, connections \(client.connectionsOpened), CPU of client and in-process server \(cpuPerRequest) µs/request")
        #expect(ok == total)
        #expect(client.connectionsOpened <= 32)
        #expect(growth < 16 << 20, "RSS grew by \(growth) bytes")
        // Measured ~9,000/s in a debug build on 2 cores; the floor only catches gross regressions on a busy machine.
        #expect(Double(total) / seconds > 1_000)
    }
}
