import Foundation

/// Where and how to connect: parsed from `redis://[[user]:password@]host[:port][/db]`.
public struct RedisConfiguration: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var username: String?
    public var password: String?
    public var database: Int
    /// Longest wait to open the TCP connection.
    public var connectTimeout: Duration
    /// Longest wait for one reply (blocking commands add their own timeout on top).
    public var commandTimeout: Duration

    public init(
        host: String, port: Int = 6379, username: String? = nil, password: String? = nil, database: Int = 0,
        connectTimeout: Duration = .seconds(5), commandTimeout: Duration = .seconds(10)
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
    }

    /// Parses a `redis://` URL; throws `RedisError(.invalidURL)` naming what is wrong (never the password).
    public init(url: String, connectTimeout: Duration = .seconds(5), commandTimeout: Duration = .seconds(10)) throws(RedisError) {
        func invalid(_ why: String) -> RedisError { RedisError(.invalidURL, why, context: "REDIS_URL") }
        guard let components = URLComponents(string: url) else { throw invalid("not a URL") }
        guard components.scheme?.lowercased() == "redis" else {
            throw invalid("scheme must be redis:// (got \(components.scheme.map { "\($0)://" } ?? "none"))")
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
            host: trimmedHost, port: port, username: (user?.isEmpty ?? true) ? nil : user, password: password,
            database: database, connectTimeout: connectTimeout, commandTimeout: commandTimeout)
        if username != nil && password == nil { throw invalid("a user name needs a password (redis://user:pass@host)") }
    }

    /// `host:port/db` without credentials, for logs and error context.
    public var redactedDescription: String { "\(host):\(port)/\(database)" }
}
