import Foundation
import HTTPClient
import Testing
import TestSupport

@Suite struct HTTPClientTests {
    struct Echo: Decodable {
        let method: String
        let path: String
        let headers: [String: String]
        let body: String
        let connection: Int
    }

    static func client(_ configure: (inout HTTPClientConfiguration) -> Void = { _ in }) throws -> HTTPClient {
        // Whatever proxy the machine running the tests has, the test servers are reached directly.
        var configuration = HTTPClientConfiguration(name: "http-client-test", proxy: .none)
        configure(&configuration)
        return try HTTPClient(configuration: configuration)
    }

    @Test func postsBodyAndHeadersAndReadsTheAnswer() async throws {
        let server = try TestHTTPServer()
        let client = try Self.client()
        let body = Array("{\"hello\":\"wörld\"}".utf8)
        let response = try await client.send(HTTPRequest(
            method: .post, url: server.baseURL + "/echo", headers: ["Content-Type": "application/json", "X-Empty": ""], body: body))
        #expect(response.status == 200)
        #expect(response.httpVersion == "1.1")
        #expect(response.headers["content-type"] == "application/json")
        #expect(response.headers["Content-Length"] == String(response.body.count))
        let echo = try JSONDecoder().decode(Echo.self, from: Data(response.body))
        #expect(echo.method == "POST")
        #expect(echo.body == "{\"hello\":\"wörld\"}")
        #expect(echo.headers["content-type"] == "application/json")
        #expect(echo.headers["x-empty"] == "")
        #expect(echo.headers["expect"] == nil)
    }

    @Test func errorStatusesAreResponsesNotErrors() async throws {
        let server = try TestHTTPServer()
        let client = try Self.client()
        for status in [400, 404, 429, 500, 503] {
            let response = try await client.send(HTTPRequest(url: server.baseURL + "/status/\(status)"))
            #expect(response.status == status)
            #expect(response.bodyText == "status \(status)")
            #expect(response.headers["X-TEST"] == "yes")
        }
    }

    @Test func sequentialRequestsReuseOneConnection() async throws {
        let server = try TestHTTPServer()
        let client = try Self.client()
        var connections = Set<Int>()
        for index in 0..<50 {
            let response = try await client.send(HTTPRequest(method: .post, url: server.baseURL + "/echo", body: Array("\(index)".utf8)))
            connections.insert(try JSONDecoder().decode(Echo.self, from: Data(response.body)).connection)
        }
        #expect(connections.count == 1)
        #expect(client.connectionsOpened == 1)
    }

    @Test func manyConcurrentRequestsStayWithinMaxConnections() async throws {
        let server = try TestHTTPServer()
        let client = try Self.client { $0.maxConnections = 8 }
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<400 {
                group.addTask { try await client.send(HTTPRequest(url: server.baseURL + "/sleep/5")).status }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.count == 400 && statuses.allSatisfy { $0 == 200 })
        #expect(client.connectionsOpened <= 8)
        #expect(server.connectionsAccepted <= 8)
        #expect(client.inFlight == 0)
    }

    @Test func refusedConnectionIsTyped() async throws {
        let client = try Self.client()
        let refusing = RefusingPort()
        defer { refusing.release() }
        let port = refusing.port
        let error = await #expect(throws: HTTPClientError.self) {
            try await client.send(HTTPRequest(url: "http://127.0.0.1:\(port)/"))
        }
        #expect(error?.code == .connectionRefused)
        #expect(error?.requestWasNotSent == true)
        #expect(error?.url == "http://127.0.0.1:\(port)/")
    }

    @Test func requestTimeoutIsTyped() async throws {
        let server = try TestHTTPServer()
        let client = try Self.client()
        let started = ContinuousClock.now
        let error = await #expect(throws: HTTPClientError.self) {
            try await client.send(HTTPRequest(url: server.baseURL + "/sleep/20000", timeout: .milliseconds(200)))
        }
        #expect(error?.code == .timeout)
        #expect(error?.requestWasNotSent == false)
        #expect(ContinuousClock.now - started < .seconds(10))
    }

    /// The engine waits in epoll for the sockets libcurl names and for its next timeout: a request waiting on a
    /// slow answer costs its thread next to no CPU (a wrong timer would spin the loop for the whole wait).
    @Test func waitingForASlowAnswerDoesNotSpin() async throws {
        let server = try TestHTTPServer()
        let client = try Self.client { $0.name = "http-idle-probe" }
        _ = try await client.send(HTTPRequest(url: server.baseURL + "/sleep/1"))
        let before = try #require(Self.threadCPUSeconds(named: "http-idle-probe"), "the engine's thread is not in /proc/self/task")
        let response = try await client.send(HTTPRequest(url: server.baseURL + "/sleep/1500", timeout: .seconds(10)))
        let spent = try #require(Self.threadCPUSeconds(named: "http-idle-probe")) - before
        #expect(response.status == 200)
        #expect(spent < 0.3, "the engine's thread used \(spent) s of CPU while waiting 1.5 s for an answer")
    }

    /// User plus system CPU seconds of this process's thread named `name` (`/proc/self/task/*/comm`).
    static func threadCPUSeconds(named name: String) -> Double? {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return nil }
        for task in tasks {
            guard let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8),
                  comm.trimmingCharacters(in: .whitespacesAndNewlines) == name,
                  let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")")
            else { continue }
            // Fields after "(comm)": state is field 3, utime 14 and stime 15.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
            return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
        }
        return nil
    }

    @Test func timeoutOnAReusedConnectionIsATransferTimeout() async throws {
        let server = try TestHTTPServer()
        let client = try Self.client()
        _ = try await client.send(HTTPRequest(url: server.baseURL + "/status/200"))
        let error = await #expect(throws: HTTPClientError.self) {
            try await client.send(HTTPRequest(url: server.baseURL + "/sleep/3000", timeout: .milliseconds(200)))
        }
        #expect(error?.code == .timeout)
        #expect(client.connectionsOpened == 1)
    }

    @Test func connectTimeoutIsTyped() async throws {
        let listener = UnresponsiveListener()
        let client = try Self.client { $0.connectTimeout = .milliseconds(300) }
        let error = await #expect(throws: HTTPClientError.self) {
            try await client.send(HTTPRequest(url: "http://127.0.0.1:\(listener.port)/"))
        }
        #expect(error?.code == .connectTimeout)
        #expect(error?.requestWasNotSent == true)
    }

    @Test func droppedConnectionIsAnIOError() async throws {
        let server = try TestHTTPServer()
        let client = try Self.client()
        let error = await #expect(throws: HTTPClientError.self) {
            try await client.send(HTTPRequest(url: server.baseURL + "/close"))
        }
        #expect(error?.code == .io)
    }

    @Test func tlsFailureIsTyped() async throws {
        // The test server speaks plain HTTP, so a TLS handshake against it fails.
        let server = try TestHTTPServer()
        let client = try Self.client()
        let error = await #expect(throws: HTTPClientError.self) {
            try await client.send(HTTPRequest(url: "https://127.0.0.1:\(server.port)/ok"))
        }
        #expect(error?.code == .tls)
    }

    @Test func invalidRequestsAreRefusedBeforeSending() async throws {
        let client = try Self.client()
        let injected = await #expect(throws: HTTPClientError.self) {
            try await client.send(HTTPRequest(url: "http://127.0.0.1:1/", headers: ["X-Evil": "a\r\nHost: other"]))
        }
        #expect(injected?.code == .invalidRequest)
        let scheme = await #expect(throws: HTTPClientError.self) { try await client.send(HTTPRequest(url: "ftp://127.0.0.1/")) }
        #expect(scheme?.code == .invalidRequest)
        let malformed = await #expect(throws: HTTPClientError.self) { try await client.send(HTTPRequest(url: "http://127.0.0.1:1/a b")) }
        #expect(malformed?.code == .invalidRequest)
        #expect(malformed?.message.contains("URL") == true)
    }

    @Test func oversizedResponseIsRefused() async throws {
        let server = try TestHTTPServer()
        let client = try Self.client { $0.maxResponseBytes = 1000 }
        #expect(try await client.send(HTTPRequest(url: server.baseURL + "/big/1000")).body.count == 1000)
        let error = await #expect(throws: HTTPClientError.self) { try await client.send(HTTPRequest(url: server.baseURL + "/big/5000")) }
        #expect(error?.code == .responseTooLarge)
    }

    @Test func cancellingTheTaskAbortsTheTransfer() async throws {
        let server = try TestHTTPServer()
        let client = try Self.client()
        let task = Task { try await client.send(HTTPRequest(url: server.baseURL + "/sleep/20000")) }
        try await waitUntil("the request is in flight") { client.inFlight == 1 }
        let started = ContinuousClock.now
        task.cancel()
        let result = await task.result
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect((result.failure as? HTTPClientError)?.code == .cancelled)
        #expect(client.inFlight == 0)
    }

    @Test func shutdownFailsWhatIsInFlightAndWhatComesLater() async throws {
        let server = try TestHTTPServer()
        let client = try Self.client()
        let task = Task { try await client.send(HTTPRequest(url: server.baseURL + "/sleep/5000")) }
        try await waitUntil("the request is in flight") { client.inFlight == 1 }
        client.shutdown()
        #expect(((await task.result).failure as? HTTPClientError)?.code == .shutdown)
        let later = await #expect(throws: HTTPClientError.self) { try await client.send(HTTPRequest(url: server.baseURL + "/ok")) }
        #expect(later?.code == .shutdown)
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
