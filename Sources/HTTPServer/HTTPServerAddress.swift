import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A numeric listen address: `0.0.0.0:9090`, `127.0.0.1:0`, `[::1]:8080`, `localhost:80`, `:9090` (all IPv4 interfaces).
public struct HTTPServerAddress: Sendable, Equatable, CustomStringConvertible {
    public enum Family: Sendable { case ipv4, ipv6 }

    /// The numeric host (`127.0.0.1`, `::1`).
    public let host: String
    /// The port; 0 asks the kernel for a free one.
    public let port: UInt16
    public let family: Family

    /// Parses `host:port`; the error names the text and what is wrong with it.
    public init(parsing text: String) throws {
        func invalid(_ reason: String) -> HTTPServerError { HTTPServerError(.invalidAddress, what: text, reason: reason) }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let hostPart: Substring
        let portPart: Substring
        if trimmed.hasPrefix("[") {
            guard let close = trimmed.firstIndex(of: "]") else { throw invalid("missing \"]\" after an IPv6 host") }
            hostPart = trimmed[trimmed.index(after: trimmed.startIndex)..<close]
            let rest = trimmed[trimmed.index(after: close)...]
            guard rest.hasPrefix(":") else { throw invalid("expected \":port\" after \"]\"") }
            portPart = rest.dropFirst()
        } else {
            guard let colon = trimmed.lastIndex(of: ":") else { throw invalid("expected host:port") }
            hostPart = trimmed[..<colon]
            portPart = trimmed[trimmed.index(after: colon)...]
            if hostPart.contains(":") { throw invalid("an IPv6 host must be written in brackets, e.g. [::1]:8080") }
        }
        guard !portPart.isEmpty, portPart.allSatisfy(\.isASCII), portPart.allSatisfy(\.isNumber), let port = UInt16(portPart) else {
            throw invalid("port must be a number from 0 to 65535")
        }
        var host = String(hostPart)
        if host.isEmpty { host = "0.0.0.0" }
        if host == "localhost" { host = "127.0.0.1" }
        if Self.parses(host, family: AF_INET) {
            family = .ipv4
        } else if Self.parses(host, family: AF_INET6) {
            family = .ipv6
        } else {
            throw invalid("host must be a numeric IPv4 or IPv6 address (or localhost)")
        }
        self.host = host
        self.port = port
    }

    public var description: String {
        family == .ipv6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    private static func parses(_ host: String, family: Int32) -> Bool {
        var buffer = in6_addr()
        return inet_pton(family, host, &buffer) == 1
    }

    /// Calls `body` with this address as a `sockaddr` and its length.
    func withSocketAddress<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        func passing<Address>(_ address: inout Address) -> T {
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<Address>.size)) }
            }
        }
        switch family {
        case .ipv4:
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            _ = inet_pton(AF_INET, host, &address.sin_addr)
            return passing(&address)
        case .ipv6:
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            _ = inet_pton(AF_INET6, host, &address.sin6_addr)
            return passing(&address)
        }
    }
}
