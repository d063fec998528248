import Foundation
import HTTPServer
import Testing

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
        // One server thread, twenty requests that each wait 300 ms: only suspension lets them overlap.
        let server = HTTPServer(configuration: .init(address: "127.0.0.1:0", threads: 1), asyncHandler: { request in
            try? await Task.sleep(for: .milliseconds(300))
            return .text("late \(request.path)")
        })
        try server.start()
        let port = try #require(server.boundPort)
        let session = parallelSession(20)
        let clock = ContinuousClock()
        let started = clock.now
        let texts = try await withThrowingTaskGroup(of: String.self) { group in
            for n in 0..<20 { group.addTask { try await fetch(port: port, "/\(n)", session: session).text } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        let elapsed = clock.now - started
        #expect(texts == Set((0..<20).map { "late /\($0)" }))
        #expect(elapsed < .seconds(3), "took \(elapsed)")
    }

    @Test func stopAnswersSuspendedRequestsAndReturns() async throws {
        let server = HTTPServer(configuration: .init(address: "127.0.0.1:0", threads: 2), asyncHandler: { _ in
            try? await Task.sleep(for: .seconds(60))
            return .text("too late")
        })
        try server.start()
        let socket = try RawSocket(port: try #require(server.boundPort), receiveTimeout: 10)
        try socket.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        try await Task.sleep(for: .milliseconds(200))  // let the request reach the handler; the test holds either way
        let clock = ContinuousClock()
        let started = clock.now
        server.stop()
        #expect(clock.now - started < .seconds(6))
        let status = socket.readStatus()
        #expect(status == 503 || status == nil)
    }

    @Test func slowClientsNeitherBlockOthersNorLingerPastTheTimeout() async throws {
        let server = try startServer(threads: 1, connectionTimeout: .seconds(1)) { _ in .text("fast") }
        let port = try #require(server.boundPort)
        var slow: [RawSocket] = []
        for _ in 0..<20 {
            let socket = try RawSocket(port: port, receiveTimeout: 5)
            try socket.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly a part")
            slow.append(socket)
        }
        let clock = ContinuousClock()
        let started = clock.now
        #expect(try await fetch(port: port, "/").text == "fast")
        #expect(clock.now - started < .milliseconds(900))

        let timedOut = slow[0].readUntilClosed()
        #expect(timedOut.closed)
        #expect(clock.now - started < .seconds(4))
    }
}
