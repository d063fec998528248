import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Opens the listening socket the daemon serves, so a bind failure reports the address and the system reason.
enum ListeningSocket {
    /// A bound, listening, non-blocking TCP socket; the caller owns the descriptor.
    static func open(_ address: HTTPServerAddress, backlog: Int) throws -> Int32 {
        let what = address.description
        let family = address.family == .ipv6 ? AF_INET6 : AF_INET
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HTTPServerError.system(.bindFailed, what: what, call: "socket") }
        do {
            var on: Int32 = 1
            guard setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
                throw HTTPServerError.system(.bindFailed, what: what, call: "setsockopt(SO_REUSEADDR)")
            }
            guard address.withSocketAddress({ bind(fd, $0, $1) }) == 0 else {
                throw HTTPServerError.system(.bindFailed, what: what, call: "bind")
            }
            guard listen(fd, Int32(clamping: backlog)) == 0 else {
                throw HTTPServerError.system(.bindFailed, what: what, call: "listen")
            }
            let flags = fcntl(fd, F_GETFL)
            guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else {
                throw HTTPServerError.system(.bindFailed, what: what, call: "fcntl(O_NONBLOCK)")
            }
            return fd
        } catch {
            close(fd)
            throw error
        }
    }

    /// Takes over an inherited descriptor: it must be a listening TCP socket; made non-blocking and close-on-exec.
    static func adopt(_ fd: Int32, as address: HTTPServerAddress) throws -> Int32 {
        let what = address.description
        var listening: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) == 0 else {
            throw HTTPServerError.system(.bindFailed, what: what, call: "getsockopt(SO_ACCEPTCONN) of descriptor \(fd)")
        }
        guard listening != 0 else { throw HTTPServerError(.bindFailed, what: what, reason: "descriptor \(fd) is not a listening socket") }
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0, fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 else {
            throw HTTPServerError.system(.bindFailed, what: what, call: "fcntl of descriptor \(fd)")
        }
        return fd
    }

    /// The local port a socket is bound to.
    static func port(of fd: Int32) -> Int? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { return nil }
        return SocketAddressText.port(of: storage)
    }
}
