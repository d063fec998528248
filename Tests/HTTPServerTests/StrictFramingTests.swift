import Foundation
@testable import HTTPServer
import Synchronization
import Testing
import TestSupport

/// Requests whose length a proxy and this server could read differently (request smuggling) are answered 400 and
/// their connection closed, before the handler sees them; one raw exchange per case.
@Suite(.serialized) struct StrictFramingTests {
    /// The server's answer to `request` sent raw: the status lines in order and whether the server closed.
    /// Off the cooperative pool: the socket reads block.
    static func exchange(_ request: String, strict: Bool = true) async throws -> (statuses: [Int], closed: Bool, handled: Int) {
        try await offThePool { try exchangeBlocking(request, strict: strict) }
    }

    static func exchangeBlocking(_ request: String, strict: Bool) throws -> (statuses: [Int], closed: Bool, handled: Int) {
        let calls = Mutex(0)
        var configuration = HTTPServerConfiguration(address: "127.0.0.1:0", threads: 1)
        configuration.strictFraming = strict
        let server = HTTPServer(configuration: configuration) { request in
            calls.withLock { $0 += 1 }
            return .text(request.path)
        }
        try server.start()
        defer { server.stop() }
        let socket = try RawSocket(port: try #require(server.boundPort), receiveTimeout: 2)
        try socket.send(request)
        let (data, closed) = socket.readUntilClosed()
        let statuses = String(decoding: data, as: UTF8.self).components(separatedBy: "\r\n")
            .filter { $0.hasPrefix("HTTP/1.") }.compactMap { Int($0.split(separator: " ")[1]) }
        return (statuses, closed, calls.withLock { $0 })
    }

    static let smuggled = "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n"

    @Test func contentLengthWithTransferEncodingIsRefused() async throws {
        for request in [
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + Self.smuggled,
            "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 40\r\n\r\n0\r\n\r\n" + Self.smuggled,
        ] {
            let answer = try await Self.exchange(request)
            #expect(answer.statuses == [400], "\(request)")
            #expect(answer.closed)
            #expect(answer.handled == 0)
        }
    }

    @Test func repeatedContentLengthIsRefusedEqualOrNot() async throws {
        for lengths in [["5", "5"], ["5", "41"], ["41", "5"]] {
            let fields = lengths.map { "Content-Length: \($0)\r\n" }.joined()
            let answer = try await Self.exchange("POST / HTTP/1.1\r\nHost: x\r\n\(fields)\r\nhello" + Self.smuggled)
            #expect(answer.statuses == [400], "\(lengths)")
            #expect(answer.closed)
            #expect(answer.handled == 0)
        }
    }

    @Test func aContentLengthThatIsNotOneNumberIsRefused() async throws {
        for value in ["5, 5", "5,41", "+5", "0x5", "5 5"] {
            let answer = try await Self.exchange("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: \(value)\r\n\r\nhello" + Self.smuggled)
            #expect(answer.statuses.first == 400, "\(value): \(answer.statuses)")
            #expect(answer.closed)
            #expect(answer.handled == 0)
        }
    }

    @Test func aHeaderNameWithASpaceBeforeItsColonIsRefused() async throws {
        for field in ["Transfer-Encoding : chunked", "Content-Length\t: 5", "X-Forwarded-User : mallory"] {
            let answer = try await Self.exchange("POST / HTTP/1.1\r\nHost: x\r\n\(field)\r\n\r\n0\r\n\r\n" + Self.smuggled)
            #expect(answer.statuses.first == 400, "\(field): \(answer.statuses)")
            #expect(answer.handled == 0, "\(field)")
        }
        #expect(FramingCheck(fields: [("Transfer-Encoding ", "chunked")]).problem != nil)
        #expect(FramingCheck(fields: [("X-Custom_Header.v2", "1")]).problem == nil)
    }

    @Test func http11WithoutHostIsRefused() async throws {
        let answer = try await Self.exchange("GET / HTTP/1.1\r\nConnection: close\r\n\r\n")
        #expect(answer.statuses.first == 400)
        #expect(answer.handled == 0)
    }

    @Test func wellFramedRequestsAreServed() async throws {
        for request in [
            "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
            "POST /b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
            "GET /c HTTP/1.0\r\n\r\n",
        ] {
            let answer = try await Self.exchange(request)
            #expect(answer.statuses == [200], "\(request)")
            #expect(answer.handled == 1)
        }
    }

    @Test func withoutStrictFramingTheLibraryAloneLetsBothHeadersThrough() async throws {
        // What the check guards against: libmicrohttpd on its own serves the request (and the one after it).
        let answer = try await Self.exchange(
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + Self.smuggled, strict: false)
        #expect(answer.handled >= 1)
        #expect(!answer.statuses.contains(400))
    }

    @Test func theCheckReadsEveryField() {
        #expect(FramingCheck(fields: [("content-length", "5")]).problem == nil)
        #expect(FramingCheck(fields: [("Content-Length", " 12 ")]).problem == nil)
        #expect(FramingCheck(fields: [("Content-Length", "5"), ("CONTENT-LENGTH", "5")]).problem != nil)
        #expect(FramingCheck(fields: [("transfer-encoding", "gzip"), ("Content-Length", "5")]).problem != nil)
        #expect(FramingCheck(fields: [("Transfer-Encoding", "chunked")]).problem == nil)
        #expect(FramingCheck(fields: [("Content-Length", "99999999999999999999")]).problem != nil, "too long to be a length")
    }

    @Test func theHeaderLimitCountsTheBlockAsSent() {
        #expect(RequestDispatcher.headerBytes([("Host", "x"), ("X-Note", "é")]) == "Host: x\r\nX-Note: é\r\n".utf8.count)
    }
}
