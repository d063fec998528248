import Foundation
@testable import HTTPClient
import HTTPTypes
import Testing
import TestSupport

/// The transfer thread polls at most once per coalescing window while requests are in flight: answers that
/// arrive within one window cost one wake-up, and libcurl's own timeouts are never pushed back by the window.
@Suite struct HTTPClientCoalescingTests {
    /// Thirty answers spread over 300 ms: polled one by one without a window, a few times with a 100 ms one.
    @Test func answersWithinAWindowShareAPoll() async throws {
        let server = try TestHTTPServer()
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
        let coalesced = try await run(window: .milliseconds(100))
        #expect(eager.polls >= 15, "without a window each answer is polled on its own: \(eager.polls) polls")
        #expect(coalesced.polls * 2 <= eager.polls, "polls: \(coalesced.polls) with a 100 ms window, \(eager.polls) without")
        #expect(coalesced.elapsed < .seconds(3))
    }

    /// Shutdown with the longest window and a request in flight: the pause ends at once and the request fails.
    @Test func shutdownIsNotHeldBackByTheWindow() async throws {
        let server = try TestHTTPServer()
        let client = try HTTPClientTests.client { $0.coalescingWindow = .seconds(30) }
        let task = Task { try await client.send(HTTPRequest(url: server.baseURL + "/sleep/20000", timeout: .seconds(60))) }
        try await waitUntil("the request is in flight") { client.inFlight == 1 }
        client.shutdown()
        #expect(((await task.result).failure as? HTTPClientError)?.code == .shutdown)
    }

    /// A window far longer than the request's timeout: the timeout still fires on time (the linger stops at
    /// libcurl's next timeout), typed as before.
    @Test func aLongWindowDoesNotDelayATimeout() async throws {
        let server = try TestHTTPServer()
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

/// The header list is reused while header fields repeat byte for byte, and built again when they change.
@Suite struct HTTPClientHeaderReuseTests {
    @Test func aChangedHeaderIsSentAndABodylessRequestGetsNoExpect() async throws {
        let server = try TestHTTPServer()
        let client = try HTTPClientTests.client()
        defer { client.shutdown() }
        func echo(_ token: String, body: String) async throws -> HTTPClientTests.Echo {
            let response = try await client.send(HTTPRequest(
                method: .post, url: server.baseURL + "/echo", headers: ["Authorization": "Bearer " + token], body: Array(body.utf8)))
            return try JSONDecoder().decode(HTTPClientTests.Echo.self, from: Data(response.body))
        }
        for (token, body) in [("one", "x"), ("one", "y"), ("two", "z"), ("two", ""), ("two", "w"), ("one", "")] {
            let answer = try await echo(token, body: body)
            #expect(answer.headers["authorization"] == "Bearer " + token)
            #expect(answer.body == body)
            #expect(answer.headers["expect"] == nil)
        }
    }

    @Test func canonicallyEquivalentValuesAreNotTheSameBytes() {
        let composed: HTTPHeaders = ["X-Name": "\u{E9}"]
        let decomposed: HTTPHeaders = ["X-Name": "e\u{301}"]
        #expect(composed == decomposed, "String equality equates them")
        #expect(!HeaderListCache.sameBytes(composed, decomposed))
        #expect(HeaderListCache.sameBytes(composed, ["X-Name": "\u{E9}"]))
        #expect(!HeaderListCache.sameBytes(composed, ["X-Name": "\u{E9}", "X-Other": ""]))
    }
}

/// A request waiting for a free connection still ends at its timeout (libcurl before 8.8 times out only requests
/// that have a connection; the engine's watchdog ends the others).
@Suite struct HTTPClientQueuedTimeoutTests {
    @Test func aRequestQueuedForAConnectionTimesOut() async throws {
        let server = try TestHTTPServer()
        let client = try HTTPClientTests.client { $0.maxConnections = 1 }
        defer { client.shutdown() }
        let holder = Task { try await client.send(HTTPRequest(url: server.baseURL + "/sleep/20000", timeout: .seconds(60))) }
        try await waitUntil("the first request is in flight") { client.inFlight == 1 }
        let started = ContinuousClock.now
        let error = await #expect(throws: HTTPClientError.self) {
            try await client.send(HTTPRequest(url: server.baseURL + "/ok", timeout: .milliseconds(300)))
        }
        #expect(error?.code == .connectTimeout)
        #expect(error?.requestWasNotSent == true, "it never left the queue")
        #expect(ContinuousClock.now - started < .seconds(8), "ended after \(ContinuousClock.now - started)")
        holder.cancel()
    }
}
