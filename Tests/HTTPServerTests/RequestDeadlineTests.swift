import Foundation
import HTTPServer
import Synchronization
import Testing
import TestSupport

@Suite("Request deadlines, header limits and the server's own answers")
struct RequestDeadlineTests {
    final class Count: Sendable {
        let value = Mutex(0)
        func increment() { value.withLock { $0 += 1 } }
        var current: Int { value.withLock { $0 } }
    }

    func start(_ configure: (inout HTTPServerConfiguration) -> Void) throws -> HTTPServer {
        var configuration = HTTPServerConfiguration(address: "127.0.0.1:0", threads: 1, maxBodyBytes: 1024, connectionTimeout: .seconds(30))
        configure(&configuration)
        let server = HTTPServer(configuration: configuration) { request in .text("got \(request.body.count)") }
        try server.start()
        return server
    }

    @Test func aClientTricklingPastTheDeadlineIsClosedThoughNeverIdle() async throws {
        let closed = Count()
        let server = try start {
            $0.requestDeadline = .milliseconds(1500)
            $0.requestDeadlineExceeded = { closed.increment() }
        }
        let port = try #require(server.boundPort)
        let trickler = try RawSocket(port: port)
        let clock = ContinuousClock()
        let started = clock.now
        var refused = false
        for byte in "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n" + String(repeating: "b", count: 50) {
            if trickler.peerClosed || (try? trickler.send(String(byte))) == nil {
                refused = true
                break
            }
            try await Task.sleep(for: .milliseconds(100))
            if clock.now - started > .seconds(6) { break }
        }
        #expect(refused)
        #expect(clock.now - started < .seconds(4), "closed at about 1.5 s")
        // The server may close the socket a moment before its deadline callback has run.
        try await waitUntil(timeout: .seconds(5), "the deadline callback") { closed.current >= 1 }
        #expect(closed.current == 1)

        // A prompt request on a kept-alive connection is answered, and so is the next one (that it gets a fresh
        // deadline is RequestDeadlineWatchdogTests', on a clock the test moves).
        let prompt = try RawSocket(port: port)
        try prompt.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(prompt.readStatus() == 200)
        try prompt.send("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(String(decoding: prompt.readUntilClosed().data, as: UTF8.self).contains("got 0"))
    }

    @Test func oversizedHeadersAndBodiesGetTheApplicationsAnswer() async throws {
        let server = try start {
            $0.maxHeaderBytes = 2048
            $0.errorResponse = { status, message in .json(["status": String(status), "message": message], status: status) }
        }
        let port = try #require(server.boundPort)
        let big = String(repeating: "h", count: 4000)
        let headers = try RawSocket(port: port).exchange("GET / HTTP/1.1\r\nHost: x\r\nX-Big: \(big)\r\nConnection: close\r\n\r\n")
        #expect(headers.contains(#""status":"431""#))
        let body = try RawSocket(port: port).exchange(
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\nConnection: close\r\n\r\n" + String(repeating: "b", count: 5000))
        #expect(body.contains(#""status":"413""#))
        let fine = try RawSocket(port: port).exchange("GET / HTTP/1.1\r\nHost: x\r\nX-Small: \(big.prefix(1000))\r\nConnection: close\r\n\r\n")
        #expect(fine == "got 0")
    }
}
