import Foundation
import HTTPClient
import HTTPTypes
import TestSupport
import Testing

/// Requests go through the configured proxy, except to the hosts it names as reached directly.
@Suite struct HTTPClientProxyTests {
    struct Proxied: Decodable {
        let proxied: String
        let body: String
    }

    @Test func aRequestGoesThroughTheProxy() async throws {
        let proxy = try TestHTTPServer()
        let client = try HTTPClientTests.client { $0.proxy = ProxySettings(http: proxy.baseURL) }
        defer { client.shutdown() }
        // `.invalid` never resolves: only a proxy can answer for it.
        let response = try await client.send(HTTPRequest(method: .post, url: "http://push.invalid/v1/send", body: Array("hello".utf8)))
        #expect(response.status == 200)
        let seen = try JSONDecoder().decode(Proxied.self, from: Data(response.body))
        #expect(seen.proxied == "http://push.invalid/v1/send")
        #expect(seen.body == "hello")
    }

    @Test func aTunnelTheProxyRefusesIsATransferError() async throws {
        let proxy = try TestHTTPServer()
        let client = try HTTPClientTests.client { $0.proxy = ProxySettings(https: proxy.baseURL) }
        defer { client.shutdown() }
        let error = await #expect(throws: HTTPClientError.self) {
            _ = try await client.send(HTTPRequest(method: .post, url: "https://push.invalid/v1/send", body: Array("x".utf8)))
        }
        #expect(error?.code == .io, "\(String(describing: error))")
        #expect(error?.message.contains("CONNECT") == true, "\(String(describing: error))")
    }

    @Test func aHostInNoProxyIsReachedDirectly() async throws {
        let server = try TestHTTPServer()
        let refusing = RefusingPort()
        defer { refusing.release() }
        let closed = refusing.port
        let direct = try HTTPClientTests.client { $0.proxy = ProxySettings(http: "http://127.0.0.1:\(closed)", noProxy: "127.0.0.1") }
        defer { direct.shutdown() }
        let echo = try await HTTPClientHandleReuseTests.echo(direct, HTTPRequest(url: server.baseURL + "/echo"))
        #expect(echo.path == "/echo")

        let proxied = try HTTPClientTests.client { $0.proxy = ProxySettings(http: "http://127.0.0.1:\(closed)") }
        defer { proxied.shutdown() }
        let error = await #expect(throws: HTTPClientError.self) {
            _ = try await proxied.send(HTTPRequest(url: server.baseURL + "/echo"))
        }
        #expect(error?.requestWasNotSent == true, "a proxy nobody answers at is a connection failure: \(String(describing: error))")
    }
}
