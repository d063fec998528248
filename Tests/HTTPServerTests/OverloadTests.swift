import Foundation
import HTTPServer
import Testing
import TestSupport

@Suite struct OverloadTests {
    @Test func pastTheThresholdRequestsAreAnswered503AtOnceAndClosed() async throws {
        var configuration = HTTPServerConfiguration(address: "127.0.0.1:0", threads: 1, connectionLimit: 10)
        configuration.overloadThreshold = 3
        let server = HTTPServer(configuration: configuration) { _ in .text("ok") }
        try server.start()
        defer { server.stop() }
        let port = try #require(server.boundPort)
        let held = try (0..<3).map { _ in try RawSocket(port: port) }
        let extra = try RawSocket(port: port)
        try await waitUntil(timeout: .seconds(5), "the fourth connection is refused") {
            try await offThePool {
                let probe = try RawSocket(port: port, receiveTimeout: 2)
                try probe.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                let (data, closed) = probe.readUntilClosed()
                return String(decoding: data, as: UTF8.self).hasPrefix("HTTP/1.1 503") && closed
            }
        }
        for socket in held + [extra] { socket.close() }
        try await waitUntil(timeout: .seconds(5), "served again") {
            try await offThePool {
                try RawSocket(port: port, receiveTimeout: 2).exchange("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") == "ok"
            }
        }
    }
}
