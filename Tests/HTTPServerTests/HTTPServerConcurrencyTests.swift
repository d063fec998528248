import Foundation
import HTTPServer
import Testing
import TestSupport

@Suite struct HTTPServerConcurrencyTests {
    @Test func answersTwoHundredParallelRequests() async throws {
        let server = try startServer(threads: 4) { request in .text("n=\(request.queryValue("n") ?? "")") }
        let port = try #require(server.boundPort)
        let session = parallelSession(50)
        let results = try await withThrowingTaskGroup(of: (Int, Fetched).self) { group in
            for n in 0..<200 {
                group.addTask { (n, try await fetch(port: port, "/?n=\(n)", session: session)) }
            }
            return try await group.reduce(into: [Int: Fetched]()) { $0[$1.0] = $1.1 }
        }
        #expect(results.count == 200)
        for (n, fetched) in results {
            #expect(fetched.status == 200)
            #expect(fetched.text == "n=\(n)")
        }
    }

    @Test func asyncHandlersWaitWithoutHoldingServerThreads() async throws {
        // One server thread, twenty requests that each wait 500 ms: 10 s one after another, far less if they overlap.
        let server = HTTPServer(configuration: .init(address: "127.0.0.1:0", threads: 1), asyncHandler: { request in
            try? await Task.sleep(for: .milliseconds(500))
            return .text("late \(request.path)")
        })
        try server.start()
        let (texts, elapsed) = try await Self.fetchAtOnce(port: try #require(server.boundPort), (0..<20).map { "/\($0)" })
        #expect(texts == Set((0..<20).map { "late /\($0)" }))
        #expect(elapsed < .seconds(5), "took \(elapsed)")
    }

    /// Fetches every path at once; the texts answered and how long it took.
    static func fetchAtOnce(port: Int, _ paths: [String]) async throws -> (Set<String>, Duration) {
        let session = parallelSession(paths.count)
        let clock = ContinuousClock()
        let started = clock.now
        let texts = try await withThrowingTaskGroup(of: String.self) { group in
            for path in paths { group.addTask { try await fetch(port: port, path, session: session).text } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        return (texts, clock.now - started)
    }

    @Test func deferringHandlersAnswerLaterFromAnotherThreadWithoutHoldingServerThreads() async throws {
        // One server thread; each request is answered 300 ms later by a thread of its own, or at once for /now.
        let server = HTTPServer(configuration: .init(address: "127.0.0.1:0", threads: 1), deferringHandler: { request, answer in
            if request.path == "/now" { return answer(.text("now")) }
            Thread.detachNewThread {
                usleep(300_000)
                answer(.text("late \(request.path)"))
                answer(.text("twice"))  // a second answer is ignored
            }
        })
        try server.start()
        let port = try #require(server.boundPort)
        let (texts, elapsed) = try await Self.fetchAtOnce(port: port, (0..<20).map { "/\($0)" } + ["/now"])
        #expect(texts == Set((0..<20).map { "late /\($0)" } + ["now"]))
        #expect(elapsed < .seconds(4), "20 × 300 ms one after another would take 6 s")
        let socket = try RawSocket(port: port)
        #expect(try socket.exchange("GET /3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") == "late /3")
        server.stop()
    }

    @Test func stopAnswersADeferredRequestThatIsNeverAnswered() async throws {
        let server = HTTPServer(configuration: .init(address: "127.0.0.1:0", threads: 1), deferringHandler: { _, _ in })
        try await Self.expectStopAnswersAParkedRequest(server)
    }

    /// Starts `server`, sends it one request its handler does not answer, stops it (`shutdown()` when `async`), and
    /// expects the stop to be quick and the request answered 503 or closed.
    static func expectStopAnswersAParkedRequest(_ server: HTTPServer, async: Bool = false) async throws {
        try server.start()
        let socket = try RawSocket(port: try #require(server.boundPort), receiveTimeout: 10)
        try socket.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        try await Task.sleep(for: .milliseconds(200))  // let the request reach the handler; the test holds either way
        let clock = ContinuousClock()
        let started = clock.now
        if async { await server.shutdown() } else { server.stop() }
        #expect(clock.now - started < .seconds(6))
        #expect(server.boundPort == nil)
        let status = socket.readStatus()
        #expect(status == 503 || status == nil)
    }

    /// `stop()`, and `shutdown()` that async callers use (it drains off the cooperative pool).
    @Test(arguments: [false, true])
    func stopAnswersSuspendedRequestsAndReturns(async: Bool) async throws {
        let server = HTTPServer(configuration: .init(address: "127.0.0.1:0", threads: 2), asyncHandler: { _ in
            try? await Task.sleep(for: .seconds(60))
            return .text("too late")
        })
        try await Self.expectStopAnswersAParkedRequest(server, async: async)
    }

    @Test func slowClientsDoNotHoldUpOthers() async throws {
        // One thread, twenty clients stuck mid-request: a request that had to wait for them would take the
        // whole 4 s timeout.
        let server = try startServer(threads: 1, connectionTimeout: .seconds(4)) { _ in .text("fast") }
        let port = try #require(server.boundPort)
        let slow = try (0..<20).map { _ in
            let socket = try RawSocket(port: port)
            try socket.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly a part")
            return socket
        }
        let clock = ContinuousClock()
        let started = clock.now
        let fast = try RawSocket(port: port)
        #expect(try fast.exchange("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") == "fast")
        #expect(clock.now - started < .seconds(3))
        #expect(slow.count == 20)
    }

    @Test func idleConnectionsAreClosedAfterTheTimeout() async throws {
        let server = try startServer(threads: 1, connectionTimeout: .seconds(1)) { _ in .text("fast") }
        let socket = try RawSocket(port: try #require(server.boundPort), receiveTimeout: 10)
        try socket.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly a part")
        let clock = ContinuousClock()
        let started = clock.now
        let (data, closed) = socket.readUntilClosed()
        let elapsed = clock.now - started
        #expect(closed)
        #expect(data.isEmpty)
        #expect(elapsed >= .milliseconds(500))
        #expect(elapsed < .seconds(6), "took \(elapsed)")
    }

    @Test func perIPLimitTurnsAwayExtraConnections() async throws {
        let server = HTTPServer(
            configuration: .init(address: "127.0.0.1:0", threads: 1, perIPConnectionLimit: 2), handler: { _ in .text("ok") })
        try server.start()
        let port = try #require(server.boundPort)
        let held = try (0..<2).map { _ in try RawSocket(port: port) }
        for socket in held { try socket.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n") }
        for socket in held { #expect(socket.readStatus() == 200) }
        let extra = try RawSocket(port: port)
        try? extra.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(extra.readStatus() == nil)
        held.forEach { $0.close() }
        // Once the server has noticed the closes, a new connection is served again.
        var answer = ""
        let deadline = ContinuousClock.now.advanced(by: .seconds(5))
        while answer != "ok" && ContinuousClock.now < deadline {
            answer = (try? RawSocket(port: port).exchange("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")) ?? ""
        }
        #expect(answer == "ok")
    }
}
