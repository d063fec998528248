import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A plain TCP connection to a local port, for requests no HTTP client sends: trickled bytes, idle
/// connections, oversized headers. Reads wait at most `readTimeout` (SO_RCVTIMEO).
final class RawConnection: @unchecked Sendable {
    let fd: Int32

    init(port: Int, readTimeout: Duration = .seconds(10)) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(what: "socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw Failure(what: "connect")
        }
        var timeout = timeval(tv_sec: Int(readTimeout.components.seconds), tv_usec: Int(readTimeout.components.attoseconds / 1_000_000_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Sends `text`; false when the peer has closed the connection.
    @discardableResult
    func send(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { buffer in
            Glibc.send(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL)) == buffer.count
        }
    }

    /// Reads until the peer closes or the read timeout passes; `closed` tells which.
    func readAll() -> (text: String, closed: Bool) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received += buffer.prefix(count)
                continue
            }
            let closed = count == 0 || errno == ECONNRESET
            return (String(decoding: received, as: UTF8.self), closed)
        }
    }

    /// Whether the peer has closed the connection (a read returns end of file or a reset at once).
    var peerClosed: Bool {
        var pollfd = Glibc.pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pollfd, 1, 0) == 1 else { return false }
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return count == 0 || (count < 0 && errno == ECONNRESET)
    }

    struct Failure: Error, CustomStringConvertible {
        let what: String
        var description: String { "\(what) failed: \(String(cString: strerror(errno)))" }
    }
}
