import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A free loopback TCP port for a server that binds it next (PostgreSQL, Redis, nghttpd: programs that cannot be
/// handed a bound socket). Never the same port twice in one process, so two tests running in parallel never get one
/// port between the pick and their servers' binds. The port lies below the kernel's ephemeral range
/// (`ip_local_port_range`), which is where every bind to port 0 and every outgoing connection takes its port: a port
/// from that range, freed again after the pick, was once taken by another test's server before nghttpd bound it.
/// For a port that must refuse connections, use `RefusingPort`.
public func freeLoopbackPort() -> Int {
    let ports = handOutRange
    var candidate = Int.random(in: ports)
    while true {
        candidate = candidate < ports.upperBound ? candidate + 1 : ports.lowerBound
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        precondition(fd >= 0, "socket() failed")
        defer { close(fd) }
        if let port = bindLoopback(fd, port: candidate), isFirstHandOut(port) { return port }
    }
}

/// The ports `freeLoopbackPort` hands out: from 10000 to just below the ephemeral range's start (32768 unless
/// `/proc/sys/net/ipv4/ip_local_port_range` says otherwise).
let handOutRange: ClosedRange<Int> = {
    let range = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
    let start = range.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } ?? 32768
    return 10000...max(10999, start - 1)
}()

/// Records `port` as handed out in this process; false when it was before (a server may be about to bind it).
func isFirstHandOut(_ port: Int) -> Bool {
    handedOutPorts.withLock { $0.insert(port).inserted }
}

private let handedOutPorts = Mutex<Set<Int>>([])

/// Binds `fd` to `127.0.0.1:port` (0: a free port the kernel picks); the port bound, or nil (errno says why).
public func bindLoopback(_ fd: Int32, port: Int) -> Int? {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    return bound ? Int(UInt16(bigEndian: address.sin_port)) : nil
}
