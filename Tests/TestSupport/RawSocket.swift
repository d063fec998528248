import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A blocking TCP client socket for tests that need byte-level control (slow clients, chunked bodies).
public final class RawSocket {
    public private(set) var fd: Int32

    public init(port: Int, host: String = "127.0.0.1", receiveTimeout: Double = 5) throws {
        var hints = addrinfo()
        hints.ai_flags = AI_NUMERICHOST
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let info = found else { throw RawSocketError(what: "getaddrinfo") }
        defer { freeaddrinfo(info) }
        fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, 0)
        guard fd >= 0 else { throw RawSocketError(what: "socket") }
        var timeout = timeval(tv_sec: Int(receiveTimeout), tv_usec: Int((receiveTimeout - receiveTimeout.rounded(.down)) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
            // deinit runs for a class whose init throws once its properties are set: close once, here, and
            // leave nothing for it (a second close could hit a descriptor another test's server reuses).
            close()
            throw RawSocketError(what: "connect")
        }
    }

    deinit { close() }

    public func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    public func send(_ text: String) throws { try send(Data(text.utf8)) }

    public func send(_ data: Data) throws {
        let sent = data.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == data.count else { throw RawSocketError(what: "send") }
    }

    /// Everything the peer sends until it closes the connection or the receive timeout passes.
    public func readUntilClosed() -> (data: Data, closed: Bool) {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count == 0 { return (data, true) }
            if count < 0 { return (data, errno == ECONNRESET) }
            data.append(contentsOf: buffer[0..<count])
        }
    }

    /// The body of a complete `Connection: close` exchange.
    public func exchange(_ request: String) throws -> String {
        try send(request)
        let text = String(decoding: readUntilClosed().data, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { return "" }
        return String(text[split.upperBound...])
    }

    /// The status code of the first response line the peer sends (nil if it closes without one).
    public func readStatus() -> Int? {
        var data = Data()
        var byte: UInt8 = 0
        while recv(fd, &byte, 1, 0) == 1 {
            data.append(byte)
            if byte == UInt8(ascii: "\n") { break }
        }
        let line = String(decoding: data, as: UTF8.self).split(separator: " ")
        return line.count >= 2 ? Int(line[1]) : nil
    }

    /// Whether the peer has closed the connection (a read would return end of file or a reset at once).
    public var peerClosed: Bool {
        var pollfd = Glibc.pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pollfd, 1, 0) == 1 else { return false }
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return count == 0 || (count < 0 && errno == ECONNRESET)
    }
}

public struct RawSocketError: Error { public let what: String }
