import Glibc

/// The forward proxy of a client's requests, fixed when the client is configured.
///
/// Left to itself, libcurl looks its proxy variables up in the environment for every transfer (five or six
/// `getenv` walks per push). Reading them once gives the same choice, lets a process check the values at start instead of
/// failing every push, and lets it say which proxy it uses.
public struct ProxySettings: Sendable, Equatable {
    /// The proxy of `https://` requests (`[scheme://][user:password@]host:port`), nil for none.
    public let https: String?
    /// The proxy of `http://` requests, nil for none.
    public let http: String?
    /// Hosts reached without the proxy: libcurl's list of names, domains and addresses, comma-separated, or `*`.
    public let noProxy: String?

    /// Schemes libcurl accepts in a proxy URL (`socks` is SOCKS4); none means `http`.
    public static let schemes: Set<String> = ["http", "https", "socks", "socks4", "socks4a", "socks5", "socks5h"]

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

    /// Equal when they send requests the same way, wherever the values came from.
    public static func == (lhs: ProxySettings, rhs: ProxySettings) -> Bool {
        lhs.https == rhs.https && lhs.http == rhs.http && lhs.noProxy == rhs.noProxy
    }

    /// The proxy of a request to `url`, "" for none (an empty `CURLOPT_PROXY` also stops libcurl's own lookup).
    public func proxy(for url: String) -> String {
        (url.hasPrefix("https://") ? https : http) ?? ""
    }

    /// For logs: each proxy without its credentials, or "none".
    public var summary: String {
        let parts = [("https", https), ("http", http)].compactMap { scheme, value in value.map { "\(scheme) via \(Self.redacted($0))" } }
        guard !parts.isEmpty else { return "none" }
        return parts.joined(separator: ", ") + (noProxy.map { ", not for \($0)" } ?? "")
    }

    /// `message` (libcurl's words about a failed transfer, which may quote the proxy URL) with each proxy URL
    /// that carries credentials replaced by its redacted form.
    public func redacting(_ message: String) -> String {
        var message = message
        for proxy in [https, http].compactMap({ $0 }) where proxy.contains("@") {
            message = message.replacing(proxy, with: Self.redacted(proxy))
        }
        return message
    }

    /// `proxy` with any `user:password@` replaced.
    public static func redacted(_ proxy: String) -> String {
        let start = proxy.firstRange(of: "://")?.upperBound ?? proxy.startIndex
        let authority = proxy[start...].prefix { $0 != "/" }
        guard let at = authority.lastIndex(of: "@") else { return proxy }
        return String(proxy[..<start]) + "[REDACTED]" + String(proxy[at...])
    }
}
