import Glibc

/// The forward proxy of a client's requests, fixed when the client is configured.
///
/// Left to itself, libcurl looks its proxy variables up in the environment for every transfer (five `getenv`
/// walks per push). Reading them once gives the same choice, lets a process check the values at start instead of
/// failing every push, and lets it say which proxy it uses.
public struct ProxySettings: Sendable, Equatable {
    /// The proxy of `https://` requests (`[scheme://][user:password@]host[:port]`), nil for none.
    public var https: String?
    /// The proxy of `http://` requests, nil for none.
    public var http: String?
    /// Hosts reached without the proxy: libcurl's list of names, domains and addresses, comma-separated, or `*`.
    public var noProxy: String?

    /// Schemes libcurl accepts in a proxy URL.
    public static let schemes: Set<String> = ["http", "https", "socks4", "socks4a", "socks5", "socks5h"]

    public static let none = ProxySettings()

    /// The process's environment, read once.
    public static let processEnvironment = ProxySettings { name in getenv(name).map { String(cString: $0) } }

    /// The environment variables `https` and `http` were read from, for messages; nil when set in code.
    public private(set) var httpsVariable: String?
    public private(set) var httpVariable: String?

    public init(https: String? = nil, http: String? = nil, noProxy: String? = nil) {
        self.https = https
        self.http = http
        self.noProxy = noProxy
    }

    /// libcurl's reading of `environment`: `https_proxy`, else `HTTPS_PROXY`, for https; `http_proxy` (lowercase
    /// only) for http; else `all_proxy` or `ALL_PROXY` for both; `no_proxy`, else `NO_PROXY`. Empty counts as unset.
    public init(environment: [String: String]) {
        self.init { environment[$0] }
    }

    private init(lookup: (String) -> String?) {
        func first(_ names: String...) -> (name: String, value: String)? {
            for name in names { if let value = lookup(name), !value.isEmpty { return (name, value) } }
            return nil
        }
        let all = first("all_proxy", "ALL_PROXY")
        let https = first("https_proxy", "HTTPS_PROXY") ?? all
        let http = first("http_proxy") ?? all
        self.init(https: https?.value, http: http?.value, noProxy: first("no_proxy", "NO_PROXY")?.value)
        httpsVariable = https?.name
        httpVariable = http?.name
    }

    /// The proxy of a request to `url`, "" for none (an empty `CURLOPT_PROXY` also stops libcurl's own lookup).
    func proxy(for url: String) -> String {
        (url.hasPrefix("https://") ? https : http) ?? ""
    }

    /// What is wrong with each proxy URL, with the variable it came from; empty when both are usable.
    public func problems() -> [(variable: String, problem: String)] {
        [(httpsVariable ?? "https proxy", https), (httpVariable ?? "http proxy", http)].compactMap { variable, value in
            value.flatMap { Self.problem(with: $0) }.map { (variable, $0) }
        }
    }

    /// For logs: each proxy without its credentials, or "none".
    public var summary: String {
        let parts = [("https", https), ("http", http)].compactMap { scheme, value in value.map { "\(scheme) via \(Self.redacted($0))" } }
        guard !parts.isEmpty else { return "none" }
        return parts.joined(separator: ", ") + (noProxy.map { ", not for \($0)" } ?? "")
    }

    static func problem(with proxy: String) -> String? {
        var rest = Substring(proxy)
        if let separator = rest.range(of: "://") {
            let scheme = rest[..<separator.lowerBound].lowercased()
            guard schemes.contains(scheme) else {
                return "has scheme \"\(scheme)\"; use one of \(schemes.sorted().joined(separator: ", "))"
            }
            rest = rest[separator.upperBound...]
        }
        if let slash = rest.firstIndex(of: "/") {
            guard rest[slash...].allSatisfy({ $0 == "/" }) else { return "must be scheme://host:port without a path" }
            rest = rest[..<slash]
        }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        var host = rest
        if let colon = rest.lastIndex(of: ":"), !rest.hasSuffix("]") {
            host = rest[..<colon]
            guard let port = Int(rest[rest.index(after: colon)...]), (1...65535).contains(port) else {
                return "has no valid port after \"\(host):\""
            }
        }
        guard !host.isEmpty, !host.contains(where: { $0.isWhitespace }) else { return "has no host" }
        return nil
    }

    /// `proxy` with any `user:password@` replaced.
    static func redacted(_ proxy: String) -> String {
        let start = proxy.range(of: "://")?.upperBound ?? proxy.startIndex
        let authority = proxy[start...].prefix { $0 != "/" }
        guard let at = authority.lastIndex(of: "@") else { return proxy }
        return String(proxy[..<start]) + "[REDACTED]" + String(proxy[at...])
    }
}
