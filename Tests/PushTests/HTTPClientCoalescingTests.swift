import Foundation
import HTTPClient
import Testing
import TestSupport

/// The transfer thread polls at most once per coalescing window while requests are in flight: answers that
/// arrive within one window cost one wake-up, and libcurl's own timeouts are never pushed back by the window.
@Suite struct HTTPClientCoalescingTests {
    /// Thirty answers spread over 300 ms: polled one by one without a window, a few times with a 200 ms one.
    @Test func answersWithinAWindowShareAPoll() async throws {
        let server = try await StubServer.start()
        func run(window: Duration) async throws -> (polls: Int, elapsed: Duration) {
            let client = try HTTPClientTests.client { $0.coalescingWindow = window }
            defer { client.shutdown() }
            _ = try await client.send(HTTPRequest(url: server.baseURL + "/sleep/1"))  // connection and thread warm
            let requests = (0..<30).map { HTTPRequest(url: server.baseURL + "/sleep/\($0 * 10)", timeout: .seconds(10)) }
            let before = client.polls
            let started = ContinuousClock.now
            let results = await client.sendAll(requests)
            #expect(results.allSatisfy { (try? $0.get().status) == 200 })
            return (client.polls - before, ContinuousClock.now - started)
        }
        let eager = try await run(window: .zero)
        let coalesced = try await run(window: .milliseconds(200))
        #expect(eager.polls >= 15, "without a window each answer is polled on its own: \(eager.polls) polls")
        #expect(coalesced.polls * 2 <= eager.polls, "polls: \(coalesced.polls) with a 200 ms window, \(eager.polls) without")
        #expect(coalesced.elapsed < .seconds(3))
    }

    /// A window far longer than the request's timeout: the timeout still fires on time (the linger stops at
    /// libcurl's next timeout), typed as before.
    @Test func aLongWindowDoesNotDelayATimeout() async throws {
        let server = try await StubServer.start()
        let client = try HTTPClientTests.client { $0.coalescingWindow = .seconds(30) }
        defer { client.shutdown() }
        let started = ContinuousClock.now
        let error = await #expect(throws: HTTPClientError.self) {
            try await client.send(HTTPRequest(url: server.baseURL + "/sleep/20000", timeout: .milliseconds(300)))
        }
        #expect(error?.code == .timeout)
        #expect(ContinuousClock.now - started < .seconds(5))
    }
}
