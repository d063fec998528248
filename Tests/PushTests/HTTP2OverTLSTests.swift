import Foundation
import HTTPClient
import Testing
import TestSupport

/// The push services speak HTTP/2 over TLS (APNs only that): the client negotiates it by ALPN, reuses the
/// connection for later requests and multiplexes concurrent ones over it. Checked against `nghttpd`.
@Suite struct HTTP2OverTLSTests {
    static let answer = #"{"name":"projects/p/messages/0:1"}"#

    static func answered(_ results: [Result<HTTPResponse, HTTPClientError>]) -> Int {
        results.filter { result in
            guard case .success(let response) = result else { return false }
            return response.status == 200 && response.httpVersion == "2" && String(decoding: response.body, as: UTF8.self) == answer
        }.count
    }

    @Test func requestsShareOneMultiplexedConnectionAndAreAllAnswered() async throws {
        let certificates = try TestCertificates()
        let root = "\(certificates.directory)/htdocs"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try Self.answer.write(toFile: "\(root)/send", atomically: true, encoding: .utf8)
        let port = freeLoopbackPort()
        let log = "\(certificates.directory)/nghttpd.log"
        let server = try SpawnedProcess(
            "/usr/sbin/nghttpd", ["--address=127.0.0.1", "--htdocs=\(root)", String(port), certificates.serverKeyFile,
                                  certificates.serverCertificateFile],
            stdout: .file(log), stderr: .file(log))
        defer { _ = server.stop() }
        try await waitUntil("nghttpd to listen") {
            guard server.isRunning else {
                Issue.record("nghttpd exited: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
                return true
            }
            guard let socket = try? RawSocket(port: port) else { return false }
            socket.close()
            return true
        }

        let client = try HTTPClient(configuration: HTTPClientConfiguration(name: "h2-test", maxConnections: 4, caFile: certificates.caFile))
        defer { client.shutdown() }
        let request = HTTPRequest(method: .post, url: "https://localhost:\(port)/send", headers: ["Content-Type": "application/json"],
                                  body: Array(#"{"message":{}}"#.utf8))
        let first = try await client.send(request)
        #expect(first.status == 200 && first.httpVersion == "2")

        // Fewer than the server's 100 concurrent streams: all on the first connection at once.
        let together = await client.sendAll(Array(repeating: request, count: 90))
        #expect(Self.answered(together) == 90)
        #expect(client.connectionsOpened == 1)

        // More than one connection carries: further connections (at most the limit), each multiplexed.
        let many = await client.sendAll(Array(repeating: request, count: 300))
        #expect(Self.answered(many) == 300, "\(many.first { (try? $0.get()) == nil }.map { "\($0)" } ?? "")")
        #expect(client.connectionsOpened <= 4)
    }
}
