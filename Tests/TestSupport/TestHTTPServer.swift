import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A small HTTP/1.1 server on a loopback port bound at start, for the HTTP client's tests: one thread per
/// connection, `Content-Length` bodies, every answer `Content-Type: application/json`. It works on bytes, so it can
/// misbehave as the tests need (the project's `HTTPServer` is built to behave). Routes:
/// - `POST /ok`: `{"ok":true}`;
/// - `/echo[?query]`: `{"method", "path", "headers" (lower-case names), "body", "connection" (1, 2, ... per accepted connection)}`;
/// - `/status/<n>`: status n, body `status <n>`, header `X-Test: yes`;
/// - `/sleep/<ms>`: `slept` after that long (cut short when the server stops);
/// - `/big/<n>`: n bytes of `x`;
/// - `/close`: the connection is closed without an answer;
/// - `/closing`: `closing` with `Connection: close`, then closed;
/// - `/then-close`: `then close`, the connection kept open, then closed 100 ms later while the client holds it idle;
/// - an absolute-form target (`http://host/path`, as a client sends to its proxy): `{"proxied": target, "body"}`;
/// - `CONNECT`: `407` with `Proxy-Authenticate`, as a proxy refusing a tunnel without credentials;
/// - a TLS ClientHello: a plain `400`, then closed, as a server without TLS answers.
///
/// Stopped by `stop()` or when released.
public final class TestHTTPServer: Sendable {
    public let port: Int
    public var baseURL: String { "http://127.0.0.1:\(port)" }
    /// Connections accepted so far.
    public var connectionsAccepted: Int { shared.accepted.load(ordering: .relaxed) }

    private let shared: Shared

    /// Listens on a free loopback port (bound here, so no other server can take it) and starts accepting.
    public init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        guard let port = bindLoopback(fd, port: 0), listen(fd, 1024) == 0 else {
            let code = POSIXErrorCode(rawValue: errno) ?? .EADDRINUSE
            close(fd)
            throw POSIXError(code)
        }
        self.port = port
        shared = Shared(listener: fd)
        Thread.detachNewThread { [shared] in shared.acceptLoop() }
    }

    deinit { stop() }

    /// Stops accepting, closes every connection, wakes every sleeping answer, and waits for the threads (idempotent).
    public func stop() { shared.stop() }

    /// What the accepting thread and the connection threads share.
    private final class Shared: @unchecked Sendable {
        let listener: Int32
        let accepted = Atomic<Int>(0)
        let threads = DispatchGroup()
        private let condition = NSCondition()
        private var stopped = false  // guarded by condition
        private var open: Set<Int32> = []  // guarded by condition; a descriptor leaves it before it is closed

        init(listener: Int32) {
            self.listener = listener
            threads.enter()
        }

        func acceptLoop() {
            defer { threads.leave() }
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 {
                    if errno == EINTR || errno == ECONNABORTED { continue }
                    return
                }
                condition.lock()
                guard !stopped else {
                    condition.unlock()
                    close(client)
                    return
                }
                open.insert(client)
                threads.enter()
                condition.unlock()
                let id = accepted.add(1, ordering: .relaxed).newValue
                Thread.detachNewThread { [self] in
                    TestHTTPConnection(fd: client, id: id, server: self).serve()
                    condition.lock()
                    open.remove(client)
                    condition.unlock()
                    close(client)
                    threads.leave()
                }
            }
        }

        /// Waits up to `milliseconds`; false when the server stopped meanwhile.
        func pause(milliseconds: Int) -> Bool {
            let deadline = Date().addingTimeInterval(Double(milliseconds) / 1000)
            condition.lock()
            defer { condition.unlock() }
            while !stopped && condition.wait(until: deadline) {}
            return !stopped
        }

        func stop() {
            condition.lock()
            let first = !stopped
            stopped = true
            if first {
                shutdown(listener, Int32(SHUT_RDWR))  // wakes the blocked accept
                for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }  // wakes blocked reads
            }
            condition.broadcast()
            condition.unlock()
            guard first else { return }
            _ = threads.wait(timeout: .now() + 10)
            close(listener)
        }
    }

    /// One connection's requests, answered in turn.
    private struct TestHTTPConnection {
        let fd: Int32
        let id: Int
        let server: Shared

        private struct Request {
            let method: String
            let target: String
            let headers: [String: String]
            let body: [UInt8]
        }

        private enum After { case keepOpen, close, closeLater }

        private struct Answer {
            var status: Int
            var body: [UInt8]
            var headers: [(String, String)] = []
            var after = After.keepOpen
        }

        func serve() {
            var buffer: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                while headEnd(buffer) == nil {
                    let count = recv(fd, &chunk, chunk.count, 0)
                    guard count > 0 else { return }
                    if buffer.isEmpty && chunk[0] == 0x16 {  // a TLS ClientHello
                        write(Answer(status: 400, body: []))
                        return
                    }
                    buffer.append(contentsOf: chunk[0..<count])
                }
                guard let end = headEnd(buffer), let request = parse(&buffer, headEnd: end, chunk: &chunk) else { return }
                guard let answer = route(request) else { return }  // dropped without an answer
                write(answer)
                switch answer.after {
                case .keepOpen: continue
                case .close: return
                case .closeLater:
                    _ = server.pause(milliseconds: 100)
                    return
                }
            }
        }

        private func headEnd(_ buffer: [UInt8]) -> Int? {
            guard buffer.count >= 4 else { return nil }
            for index in 0...(buffer.count - 4) where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
                return index
            }
            return nil
        }

        /// The request whose head ends at `headEnd`, its body read; removed from `buffer`. Nil when the peer went away.
        private func parse(_ buffer: inout [UInt8], headEnd: Int, chunk: inout [UInt8]) -> Request? {
            let lines = String(decoding: buffer[0..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
            let start = lines[0].split(separator: " ", maxSplits: 2)
            guard start.count >= 2 else { return nil }
            var headers: [String: String] = [:]
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            let length = Int(headers["content-length"] ?? "0") ?? 0
            while buffer.count < headEnd + 4 + length {
                let count = recv(fd, &chunk, chunk.count, 0)
                guard count > 0 else { return nil }
                buffer.append(contentsOf: chunk[0..<count])
            }
            let body = Array(buffer[(headEnd + 4)..<(headEnd + 4 + length)])
            buffer.removeFirst(headEnd + 4 + length)
            return Request(method: String(start[0]), target: String(start[1]), headers: headers, body: body)
        }

        private func route(_ request: Request) -> Answer? {
            let target = request.target
            let text = String(decoding: request.body, as: UTF8.self)
            if request.method == "CONNECT" {
                return Answer(status: 407, body: [], headers: [("Proxy-Authenticate", #"Basic realm="test""#)])
            }
            if target.hasPrefix("http://") { return json(["proxied": target, "body": text]) }
            let path = target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? target
            let parts = path.split(separator: "/").map(String.init)
            switch (parts.first ?? "", parts.count) {
            case ("ok", 1) where request.method == "POST": return Answer(status: 200, body: Array(#"{"ok":true}"#.utf8))
            case ("echo", 1):
                return json(["method": request.method, "path": target, "headers": request.headers, "body": text, "connection": id])
            case ("status", 2):
                guard let status = Int(parts[1]) else { break }
                return Answer(status: status, body: Array("status \(status)".utf8), headers: [("X-Test", "yes")])
            case ("sleep", 2):
                guard let milliseconds = Int(parts[1]) else { break }
                guard server.pause(milliseconds: milliseconds) else { return nil }
                return Answer(status: 200, body: Array("slept".utf8))
            case ("big", 2):
                guard let count = Int(parts[1]) else { break }
                return Answer(status: 200, body: [UInt8](repeating: UInt8(ascii: "x"), count: count))
            case ("close", 1): return nil
            case ("closing", 1): return Answer(status: 200, body: Array("closing".utf8), headers: [("Connection", "close")], after: .close)
            case ("then-close", 1): return Answer(status: 200, body: Array("then close".utf8), after: .closeLater)
            default: break
            }
            return Answer(status: 404, body: Array(#"{"error":"no route"}"#.utf8))
        }

        private func json(_ object: [String: Any]) -> Answer {
            Answer(status: 200, body: Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()))
        }

        private func write(_ answer: Answer) {
            var head = "HTTP/1.1 \(answer.status) \(Self.reasons[answer.status] ?? "Status")\r\nContent-Type: application/json\r\n"
            head += "Content-Length: \(answer.body.count)\r\n"
            for (name, value) in answer.headers { head += "\(name): \(value)\r\n" }
            let bytes = Array((head + "\r\n").utf8) + answer.body
            var sent = 0
            while sent < bytes.count {
                let count = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard count > 0 else { return }
                sent += count
            }
        }

        private static let reasons = [
            200: "OK", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 407: "Proxy Authentication Required",
            410: "Gone", 413: "Payload Too Large", 429: "Too Many Requests", 500: "Internal Server Error", 503: "Service Unavailable",
        ]
    }
}
