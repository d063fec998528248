import Foundation
import HTTPClient
import TestSupport
import Testing

/// An easy handle keeps its options from one request to the next of the same shape (URL, method, body or not,
/// timeout, header list): every request must still go out as it was asked for, whatever came before it on the
/// handle. One connection, so every request takes the same handle.
@Suite struct HTTPClientHandleReuseTests {
    static func echo(_ client: HTTPClient, _ request: HTTPRequest) async throws -> HTTPClientTests.Echo {
        let response = try await client.send(request)
        #expect(response.status == 200)
        return try JSONDecoder().decode(HTTPClientTests.Echo.self, from: Data(response.body))
    }

    @Test func eachRequestGoesOutAsAskedWhateverTheHandleSentBefore() async throws {
        let server = try TestHTTPServer()
        let client = try HTTPClientTests.client { $0.maxConnections = 1 }
        defer { client.shutdown() }
        let url = server.baseURL + "/echo"
        let requests: [HTTPRequest] = [
            HTTPRequest(method: .post, url: url, headers: ["X-A": "1"], body: Array("first".utf8)),
            HTTPRequest(method: .post, url: url, headers: ["X-A": "1"], body: Array("second, longer than the first".utf8)),
            HTTPRequest(method: .post, url: url, headers: ["X-A": "1"], body: Array("3".utf8)),
            HTTPRequest(method: .get, url: url),
            HTTPRequest(method: .put, url: url, headers: ["X-A": "1"], body: Array("put".utf8)),
            HTTPRequest(method: .delete, url: url),
            HTTPRequest(method: .post, url: url, headers: ["X-B": "2"], body: Array("other header".utf8)),
            HTTPRequest(method: .post, url: url + "?q=1", headers: ["X-B": "2"], body: Array("other url".utf8)),
            HTTPRequest(method: .post, url: url, headers: ["X-B": "2"], body: Array("other timeout".utf8), timeout: .seconds(7)),
            HTTPRequest(method: .post, url: url, headers: ["X-B": "2"], body: []),
            HTTPRequest(method: .get, url: url, headers: ["X-B": "2"]),
            HTTPRequest(method: .post, url: url, headers: ["X-A": "1"], body: Array("back to the first kind".utf8)),
        ]
        for request in requests {
            let echo = try await Self.echo(client, request)
            #expect(echo.method == request.method.rawValue, "\(request)")
            #expect(echo.path == (request.url.hasSuffix("?q=1") ? "/echo?q=1" : "/echo"))
            #expect(echo.body == String(decoding: request.body, as: UTF8.self))
            #expect(echo.headers["x-a"] == request.headers["X-A"])
            #expect(echo.headers["x-b"] == request.headers["X-B"])
            #expect(echo.headers["content-length"] == (request.method == .get ? nil : String(request.body.count)))
        }
        #expect(client.connectionsOpened == 1)
    }

    @Test func aFailedTransferLeavesNothingBehindForTheNext() async throws {
        let server = try TestHTTPServer()
        let client = try HTTPClientTests.client { $0.maxConnections = 1 }
        defer { client.shutdown() }
        let first = try await Self.echo(client, HTTPRequest(method: .post, url: server.baseURL + "/echo", body: Array("a".utf8)))
        #expect(first.body == "a")
        // A short timeout fails; the same URL with a longer one must not inherit it.
        await #expect(throws: HTTPClientError.self) {
            _ = try await client.send(HTTPRequest(url: server.baseURL + "/sleep/400", timeout: .milliseconds(100)))
        }
        let slept = try await client.send(HTTPRequest(url: server.baseURL + "/sleep/400", timeout: .seconds(5)))
        #expect(slept.bodyText == "slept")
        // A dropped connection's error is its own, not an earlier transfer's words.
        let dropped = await #expect(throws: HTTPClientError.self) {
            _ = try await client.send(HTTPRequest(method: .post, url: server.baseURL + "/close", body: Array("x".utf8)))
        }
        #expect(dropped?.message.contains("timed out") == false)
        let last = try await Self.echo(client, HTTPRequest(method: .post, url: server.baseURL + "/echo", body: Array("b".utf8)))
        #expect(last.body == "b")
    }
}

/// An idle connection's socket stays in the client's epoll set between transfers (parked): the client sees every
/// connection socket opened and closed, so a closed one is never taken for a new one with the same number, and a
/// parked one its peer closes is dropped from the set instead of being reported at every wait.
@Suite struct HTTPClientParkedConnectionTests {
    @Test func aParkedConnectionClosedByItsPeerIsNeitherSpunOnNorUsed() async throws {
        let server = try TestHTTPServer()
        let client = try HTTPClientTests.client { $0.maxConnections = 1 }
        defer { client.shutdown() }
        #expect(try await client.send(HTTPRequest(url: server.baseURL + "/then-close")).bodyText == "then close")
        // The server closes the idle connection 100 ms after its answer; a parked socket left readable in a
        // level-triggered set would wake the loop thousands of times in this window.
        let polls = client.polls
        try await Task.sleep(for: .milliseconds(700))
        #expect(client.polls - polls < 20)
        let echo = try await HTTPClientHandleReuseTests.echo(client, HTTPRequest(method: .post, url: server.baseURL + "/echo", body: Array("next".utf8)))
        #expect(echo.body == "next")
        #expect(client.connectionsOpened == 2)
    }

    @Test func aNewConnectionOnAClosedOnesNumberIsWatched() async throws {
        let server = try TestHTTPServer()
        let client = try HTTPClientTests.client { $0.maxConnections = 1 }
        defer { client.shutdown() }
        // Each answer closes its connection; the next socket usually gets the same descriptor number.
        for _ in 0..<20 {
            let response = try await client.send(HTTPRequest(url: server.baseURL + "/closing", timeout: .seconds(5)))
            #expect(response.bodyText == "closing")
        }
        let echo = try await HTTPClientHandleReuseTests.echo(client, HTTPRequest(method: .post, url: server.baseURL + "/echo", body: Array("last".utf8)))
        #expect(echo.body == "last")
        #expect(client.connectionsOpened == 21)
    }
}
