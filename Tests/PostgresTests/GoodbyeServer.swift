import BlockingIO
import Foundation
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A loopback server that speaks just enough of the PostgreSQL protocol to open sessions (no authentication,
/// every simple query answered with `SET`), and on request sends an idle session the FATAL message a terminated
/// backend sends, while keeping its socket open: the moment between a goodbye and its end of file, held still.
final class GoodbyeServer: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let sessions = Locked<[Int32]>([])
    private let thread: Thread

    /// The backend process id the n-th session (from 1) reports.
    static func processID(ofSession number: Int) -> Int32 { Int32(1000 + number) }

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        guard let bound = bindLoopback(listener, port: 0), listen(listener, 8) == 0 else {
            close(listener)
            throw POSIXError(.EADDRNOTAVAIL)
        }
        port = bound
        self.listener = listener
        let sessions = sessions
        thread = Thread {
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                // As the real server does: a small goodbye must not wait behind Nagle for an ACK.
                var on: Int32 = 1
                setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
                let number = sessions.withLock { $0.append(client); return $0.count }
                Thread.detachNewThread { Self.serve(client, processID: Self.processID(ofSession: number)) }
            }
        }
        thread.start()
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for session in sessions.value {
            shutdown(session, Int32(SHUT_RDWR))
            close(session)
        }
    }

    /// Sessions opened so far.
    var sessionCount: Int { sessions.value.count }

    /// Sends the newest session the goodbye of a terminated backend and leaves its socket open. On loopback the
    /// bytes are in the client's receive queue when this returns.
    func sayGoodbyeToNewestSession() {
        guard let session = sessions.value.last else { return }
        var fields: [UInt8] = []
        for (code, value) in [("S", "FATAL"), ("V", "FATAL"), ("C", "57P01"),
                              ("M", "terminating connection due to administrator command")] {
            fields += Array(code.utf8) + Array(value.utf8) + [0]
        }
        Self.send(session, Self.message("E", fields + [0]))
    }

    // MARK: The protocol, as far as the client needs it

    private static func serve(_ client: Int32, processID: Int32) {
        // SSL or GSS encryption requests are declined with "N"; then comes the startup message.
        while true {
            guard let length = readInt32(client), length >= 8, let body = readBytes(client, Int(length) - 4) else { return }
            let code = body.prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
            if code == 80_877_103 || code == 80_877_104 {
                send(client, [UInt8(ascii: "N")])
                continue
            }
            break
        }
        var greeting = message("R", int32(0))
        for (name, value) in [("server_version", "16.0"), ("client_encoding", "UTF8"), ("DateStyle", "ISO, MDY"),
                              ("integer_datetimes", "on"), ("standard_conforming_strings", "on")] {
            greeting += message("S", Array(name.utf8) + [0] + Array(value.utf8) + [0])
        }
        greeting += message("K", int32(processID) + int32(42)) + message("Z", [UInt8(ascii: "I")])
        send(client, greeting)
        while let type = readBytes(client, 1), let length = readInt32(client), length >= 4,
              let body = readBytes(client, Int(length) - 4) {
            switch type[0] {
            case UInt8(ascii: "Q"):
                let statements = body.filter { $0 == UInt8(ascii: ";") }.count + 1
                let complete = Array(repeating: message("C", Array("SET".utf8) + [0]), count: statements).flatMap { $0 }
                send(client, complete + message("Z", [UInt8(ascii: "I")]))
            case UInt8(ascii: "X"):
                return
            default:
                continue
            }
        }
    }

    private static func message(_ type: Character, _ body: [UInt8]) -> [UInt8] {
        [type.asciiValue!] + int32(Int32(body.count + 4)) + body
    }

    private static func int32(_ value: Int32) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    private static func readInt32(_ socket: Int32) -> Int32? {
        readBytes(socket, 4).map { bytes in Int32(bitPattern: bytes.reduce(0) { $0 << 8 | UInt32($1) }) }
    }

    private static func readBytes(_ socket: Int32, _ count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let got = bytes.withUnsafeMutableBytes { recv(socket, $0.baseAddress! + filled, count - filled, 0) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { return nil }
            filled += got
        }
        return bytes
    }

    private static func send(_ socket: Int32, _ bytes: [UInt8]) {
        var sent = 0
        while sent < bytes.count {
            let wrote = bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if wrote < 0 && errno == EINTR { continue }
            guard wrote > 0 else { return }
            sent += wrote
        }
    }
}
