import Configuration
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The proxies whose `X-Forwarded-For` is believed (`API_TRUSTED_PROXIES`: comma-separated addresses or CIDR
/// ranges, IPv4 or IPv6), so the per-address write limit counts clients, not the load balancer in front.
///
/// A request from a trusted peer is attributed to the right-most `X-Forwarded-For` entry that is not itself a
/// trusted proxy (entries further left are whatever the client chose to send); a request from any other peer
/// to the peer's own address, whatever it sends.
public struct TrustedProxies: Sendable, Equatable {
    struct Range: Sendable, Equatable {
        let network: [UInt8]
        let prefixLength: Int

        func contains(_ address: [UInt8]) -> Bool {
            guard address.count == network.count else { return false }
            var remaining = prefixLength
            for (a, n) in zip(address, network) {
                guard remaining > 0 else { return true }
                let bits = min(8, remaining)
                let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
                if a & mask != n & mask { return false }
                remaining -= bits
            }
            return true
        }
    }

    let ranges: [Range]

    public static let none = TrustedProxies(ranges: [])

    /// Parses `10.0.0.0/8, 192.168.1.7, fd00::/8`.
    /// - Throws: a message naming the entry that is not an address or range.
    public init(parsing text: String) throws {
        var ranges: [Range] = []
        for entry in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty {
            let parts = entry.split(separator: "/", maxSplits: 1).map(String.init)
            guard let address = Self.bytes(of: parts[0]) else { throw ParseError(entry: entry) }
            var prefix = address.count * 8
            if parts.count == 2 {
                guard let length = Int(parts[1]), (0...address.count * 8).contains(length) else { throw ParseError(entry: entry) }
                prefix = length
            }
            ranges.append(Range(network: address, prefixLength: prefix))
        }
        self.ranges = ranges
    }

    init(ranges: [Range]) { self.ranges = ranges }

    /// The ranges of the variable `name` (none when it is unset).
    /// - Throws: `ConfigError` naming the variable and the entry that is not an address or range.
    public static func load(_ name: String, from env: Environment) throws(ConfigError) -> TrustedProxies {
        do { return try TrustedProxies(parsing: env.optionalString(name) ?? "") } catch {
            throw ConfigError(.invalid, variable: name, problem: "\(error)")
        }
    }

    /// The address the per-address limit counts for a request from `peer` (an address, no port).
    func clientAddress(peer: String, forwardedFor: String?) -> String {
        guard isTrusted(peer), let forwardedFor else { return peer }
        let hops = forwardedFor.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        for hop in hops.reversed() where !isTrusted(hop) {
            return Self.bytes(of: hop) == nil ? peer : hop
        }
        return hops.first.flatMap { Self.bytes(of: $0) == nil ? nil : $0 } ?? peer
    }

    /// Whether `address` (numeric, no port) is in one of the ranges.
    public func isTrusted(_ address: String) -> Bool {
        guard !ranges.isEmpty, let bytes = Self.bytes(of: address) else { return false }
        return ranges.contains { $0.contains(bytes) }
    }

    /// The address part of a peer's `ip:port` / `[ip]:port`.
    public static func address(ofPeer remote: String) -> String {
        if remote.hasPrefix("["), let end = remote.firstIndex(of: "]") { return String(remote[remote.index(after: remote.startIndex)..<end]) }
        if let colon = remote.lastIndex(of: ":"), remote.firstIndex(of: ":") == colon { return String(remote[..<colon]) }
        return remote
    }

    /// The address's bytes (4 or 16), or nil when it is not a numeric IPv4 or IPv6 address.
    static func bytes(of text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    struct ParseError: Error, CustomStringConvertible {
        let entry: String
        var description: String { "\"\(entry)\" is not an IP address or CIDR range" }
    }
}
