import Foundation

/// Where and how to connect: parsed from `redis[s]://[[user]:password@]host[:port][/db]`, plus TLS and Sentinel
/// settings from the environment (`RedisConfiguration(url:environment:)`).
public struct RedisConfiguration: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var username: String?
    public var password: String?
    public var database: Int
    /// Longest wait to open the TCP connection (with Sentinel: discovery, connect and TLS handshake together).
    public var connectTimeout: Duration
    /// Longest wait for one reply (blocking commands add their own timeout on top).
    public var commandTimeout: Duration
    /// TLS settings for `rediss://`; `nil` for plain TCP.
    public var tls: RedisTLS?
    /// Discover the primary through Sentinel instead of connecting to `host:port`.
    public var sentinel: RedisSentinel?

    public init(
        host: String, port: Int = 6379, username: String? = nil, password: String? = nil, database: Int = 0,
        connectTimeout: Duration = .seconds(5), commandTimeout: Duration = .seconds(10), tls: RedisTLS? = nil,
        sentinel: RedisSentinel? = nil
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
        self.tls = tls
        self.sentinel = sentinel
    }

    /// Parses a `redis://` or `rediss://` (TLS) URL; throws `RedisError(.invalidURL)` naming what is wrong (never
    /// the password).
    public init(url: String) throws(RedisError) {
        func invalid(_ why: String) -> RedisError { RedisError(.invalidURL, why, context: "REDIS_URL") }
        guard let components = URLComponents(string: url) else { throw invalid("not a URL") }
        let scheme = components.scheme?.lowercased()
        guard scheme == "redis" || scheme == "rediss" else {
            throw invalid("scheme must be redis:// or rediss:// (got \(components.scheme.map { "\($0)://" } ?? "none"))")
        }
        guard let host = components.host, !host.isEmpty else { throw invalid("missing host") }
        let port = components.port ?? 6379
        guard (1...65535).contains(port) else { throw invalid("port \(port) is out of range") }
        var database = 0
        let path = components.path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        if !path.isEmpty {
            guard let number = Int(path), number >= 0 else { throw invalid("database must be a non-negative integer (got \"\(path)\")") }
            database = number
        }
        let user = components.percentEncodedUser.flatMap { $0.removingPercentEncoding }
        let password = components.percentEncodedPassword.flatMap { $0.removingPercentEncoding }
        if components.percentEncodedPassword != nil && password == nil { throw invalid("password is not valid percent-encoding") }
        let trimmedHost = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        self.init(
            host: trimmedHost, port: port, username: (user?.isEmpty ?? true) ? nil : user, password: password, database: database,
            tls: scheme == "rediss" ? RedisTLS() : nil)
        if username != nil && password == nil { throw invalid("a user name needs a password (redis://user:pass@host)") }
    }

    /// Parses `url` and applies `REDIS_TLS_CA_FILE`, `REDIS_TLS_CERT_FILE`, `REDIS_TLS_KEY_FILE`,
    /// `REDIS_TLS_SERVER_NAME`, `REDIS_SENTINELS`, `REDIS_SENTINEL_MASTER` and `REDIS_SENTINEL_PASSWORD` from
    /// `environment`. Errors name the variable in `context`.
    public init(url: String, environment: [String: String]) throws(RedisError) {
        try self.init(url: url)
        func value(_ name: String) -> String? {
            guard let raw = environment[name]?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else { return nil }
            return raw
        }
        func file(_ name: String) throws(RedisError) -> String? {
            guard let path = value(name) else { return nil }
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw RedisError(.invalidSetting, "file \(path) does not exist or is not readable", context: name)
            }
            return path
        }
        let tlsNames = ["REDIS_TLS_CA_FILE", "REDIS_TLS_CERT_FILE", "REDIS_TLS_KEY_FILE", "REDIS_TLS_SERVER_NAME"]
        if var tls {
            tls.caFile = try file("REDIS_TLS_CA_FILE")
            tls.certificateFile = try file("REDIS_TLS_CERT_FILE")
            tls.keyFile = try file("REDIS_TLS_KEY_FILE")
            tls.serverName = value("REDIS_TLS_SERVER_NAME")
            if (tls.certificateFile == nil) != (tls.keyFile == nil) {
                let missing = tls.certificateFile == nil ? "REDIS_TLS_CERT_FILE" : "REDIS_TLS_KEY_FILE"
                throw RedisError(.invalidSetting, "is required when a client certificate is configured (set both or neither)", context: missing)
            }
            self.tls = tls
        } else if let name = tlsNames.first(where: { value($0) != nil }) {
            throw RedisError(.invalidSetting, "is set but REDIS_URL is not rediss:// (TLS)", context: name)
        }
        sentinel = try RedisSentinel(
            sentinels: value("REDIS_SENTINELS"), master: value("REDIS_SENTINEL_MASTER"), password: value("REDIS_SENTINEL_PASSWORD"))
    }

    /// `host:port/db` (or the Sentinel master name) without credentials, for logs and error context.
    public var redactedDescription: String {
        if let sentinel { return "sentinel:\(sentinel.masterName)/\(database)" }
        return "\(host):\(port)/\(database)"
    }
}
