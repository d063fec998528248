import Foundation
import HTTPServer
import Synchronization
import Testing
import TestSupport

/// Starts a server on a free loopback port for one test.
func startServer(
    threads: Int = 2, maxBodyBytes: Int = 1 << 20, connectionTimeout: Duration = .seconds(30),
    handler: @escaping HTTPServer.Handler
) throws -> HTTPServer {
    let server = HTTPServer(
        configuration: .init(address: "127.0.0.1:0", threads: threads, maxBodyBytes: maxBodyBytes, connectionTimeout: connectionTimeout),
        handler: handler)
    try server.start()
    return server
}

@Suite struct HTTPServerTests {
    @Test func routesByMethodAndPathWithQueryAndHeaders() async throws {
        let server = try startServer { request in
            switch (request.method, request.path) {
            case ("GET", "/hello"):
                let name = request.queryValue("name") ?? "nobody"
                let custom = request.headers["x-CUSTOM-header"] ?? "none"
                var response = HTTPResponse.text("hello \(name) \(custom) \(request.query.count)")
                response.headers["X-Reply"] = "yes"
                return response
            case ("GET", "/peer"):
                return .text(request.remoteAddress)
            case (_, "/hello"):
                return .methodNotAllowed(allowed: ["GET"])
            default:
                return .notFound
            }
        }
        let port = try #require(server.boundPort)
        let hello = try await fetch(port: port, "/hello?name=J%C3%BCrgen&flag", headers: ["X-Custom-Header": "abc"])
        #expect(hello.status == 200)
        #expect(hello.text == "hello Jürgen abc 2")
        #expect(hello.headers["x-reply"] == "yes")
        #expect(hello.headers["content-type"] == "text/plain; charset=utf-8")

        let peer = try await fetch(port: port, "/peer")
        #expect(peer.text.hasPrefix("127.0.0.1:"))

        #expect(try await fetch("DELETE", port: port, "/hello").status == 405)
        #expect(try await fetch(port: port, "/elsewhere").status == 404)
    }

    @Test func echoesALargeBodyAssembledFromChunks() async throws {
        let server = try startServer { request in
            HTTPResponse(status: 200, headers: ["Content-Type": "application/octet-stream"], body: request.body)
        }
        let port = try #require(server.boundPort)
        let body = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let echoed = try await fetch("POST", port: port, "/echo", body: body)
        #expect(echoed.status == 200)
        #expect(echoed.body == body)
    }

    @Test func jsonHelpersEncodeAndDecode() async throws {
        struct Greeting: Codable, Equatable { let name: String; let count: Int }
        let server = try startServer { request in
            guard let greeting = try? JSONDecoder().decode(Greeting.self, from: request.body) else { return .json(["error": "bad json"], status: 400) }
            return .json(Greeting(name: greeting.name.uppercased(), count: greeting.count + 1), status: 201)
        }
        let port = try #require(server.boundPort)
        let good = try await fetch("POST", port: port, "/", body: Data(#"{"name":"ada","count":1}"#.utf8))
        #expect(good.status == 201)
        #expect(try JSONDecoder().decode(Greeting.self, from: good.body) == Greeting(name: "ADA", count: 2))
        #expect(good.headers["content-type"] == "application/json; charset=utf-8")
        let bad = try await fetch("POST", port: port, "/", body: Data("nope".utf8))
        #expect(bad.status == 400)
        #expect(bad.text == #"{"error":"bad json"}"#)
    }

    @Test func bodyOverTheLimitIsRefusedBeforeTheHandler() async throws {
        let calls = Counter()
        let server = try startServer(maxBodyBytes: 1000) { request in
            calls.increment()
            return .text("\(request.body.count)")
        }
        let port = try #require(server.boundPort)
        #expect(try await fetch("POST", port: port, "/", body: Data(count: 1000)).text == "1000")
        let tooLarge = try await fetch("POST", port: port, "/", body: Data(count: 5000))
        #expect(tooLarge.status == 413)

        // Declared too large, but within the allowance: the body is read and dropped, then answered, so the sender
        // can finish sending and read the 413.
        let sent = try RawSocket(port: port)
        try sent.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 200000\r\n\r\n" + String(repeating: "c", count: 200_000))
        #expect(sent.readStatus() == 413)

        // Declared far too large: answered at once, without sending (or waiting for) the body.
        let declared = try RawSocket(port: port)
        try declared.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n")
        #expect(declared.readStatus() == 413)

        // Chunked, no length up front: refused once the limit is crossed.
        let chunked = try RawSocket(port: port)
        let chunk = String(repeating: "a", count: 800)
        try chunked.send("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        try chunked.send("320\r\n\(chunk)\r\n320\r\n\(chunk)\r\n0\r\n\r\n")
        #expect(chunked.readStatus() == 413)

        // A chunked sender that goes on far past the limit is cut off.
        let endless = try RawSocket(port: port)
        let big = String(repeating: "b", count: 0x10000)
        try endless.send("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        for _ in 0..<64 { try? endless.send("10000\r\n\(big)\r\n") }
        #expect(endless.readUntilClosed().closed)
        #expect(calls.value == 1)
    }

    @Test func droppedResponseClosesTheConnectionWithoutAnswering() async throws {
        let server = try startServer { _ in .dropConnection }
        let socket = try RawSocket(port: try #require(server.boundPort))
        try socket.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        let (data, closed) = socket.readUntilClosed()
        #expect(closed)
        #expect(data.isEmpty)
    }

    @Test func boundPortIsDiscoveredAndStopReleasesIt() async throws {
        let server = try startServer { _ in .text("ok") }
        let port = try #require(server.boundPort)
        #expect(port > 0)
        #expect(server.boundAddress == "127.0.0.1:\(port)")
        #expect(try await fetch(port: port, "/").text == "ok")
        server.stop()
        #expect(server.boundPort == nil)
        #expect(throws: (any Error).self) { try RawSocket(port: port) }
        server.stop()

        // The port is free again.
        let again = HTTPServer(configuration: .init(address: "127.0.0.1:\(port)"), handler: { _ in .text("again") })
        try again.start()
        #expect(try await fetch(port: port, "/").text == "again")
    }

    @Test func bindConflictNamesTheAddress() throws {
        let first = try startServer { _ in .text("first") }
        let port = try #require(first.boundPort)
        let second = HTTPServer(configuration: .init(address: "127.0.0.1:\(port)"), handler: { _ in .text("second") })
        let error = try #require(throws: HTTPServerError.self) { try second.start() }
        #expect(error.code == .bindFailed)
        #expect(error.what == "127.0.0.1:\(port)")
        #expect(error.description.contains("Address already in use"))
    }

    @Test func startTwiceAndBadSettingsAreTypedErrors() throws {
        let server = try startServer { _ in .text("ok") }
        #expect(throws: HTTPServerError.self) { try server.start() }
        let badThreads = HTTPServer(configuration: .init(address: "127.0.0.1:0", threads: 0), handler: { _ in .text("") })
        #expect { try badThreads.start() } throws: { ($0 as? HTTPServerError)?.code == .invalidConfiguration }
        let badAddress = HTTPServer(configuration: .init(address: "127.0.0.1"), handler: { _ in .text("") })
        #expect { try badAddress.start() } throws: { ($0 as? HTTPServerError)?.code == .invalidAddress }
    }

    @Test func servesIPv6Loopback() async throws {
        let server = HTTPServer(configuration: .init(address: "[::1]:0"), handler: { request in .text(request.remoteAddress) })
        do {
            try server.start()
        } catch let error as HTTPServerError where error.code == .bindFailed {
            return  // no IPv6 on this machine
        }
        let port = try #require(server.boundPort)
        #expect(server.boundAddress == "[::1]:\(port)")
        let socket = try RawSocket(port: port, host: "::1")
        #expect(try socket.exchange("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").hasPrefix("[::1]:"))
    }
}

/// A thread-safe counter for handlers.
final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
