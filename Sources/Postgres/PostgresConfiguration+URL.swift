import CLibPQ
import Foundation

extension PostgresConfiguration {
    /// Parses `postgres://user:password@host:port/database?keyword=value` (or `postgresql://`).
    ///
    /// User name, password and database may be percent-encoded. Query keywords are libpq connection
    /// keywords; `connect_timeout` (default 5 s) and `application_name` (default `countdown`) are read into
    /// their own properties, and `prepared_statements=false` (not a libpq keyword) turns statement caching off. Errors say what is wrong and never contain the password.
    public init(url: String) throws {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased() else {
            throw Self.invalid("not a valid URL; expected postgres://user:password@host:port/database "
                + "(percent-encode special characters in the user name and password)")
        }
        guard scheme == "postgres" || scheme == "postgresql" else {
            throw Self.invalid("scheme \(Self.mention(scheme, in: url)) is not supported; use postgres:// or postgresql://")
        }
        var query = try Self.queryParameters(components, url: url)

        var host = components.host ?? ""
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if let socketHost = query.removeValue(forKey: "host") {
            guard host.isEmpty else { throw Self.invalid("the host is given twice (in the URL and as ?host=)") }
            host = socketHost
        }
        guard !host.isEmpty else { throw Self.invalid("the host is missing") }

        let port = components.port ?? Self.defaultPort
        guard (1...65535).contains(port) else {
            throw Self.invalid("port \(Self.mention(String(port), in: url)) is out of range 1-65535")
        }

        var database: String? = components.path
        if database?.hasPrefix("/") == true { database?.removeFirst() }
        if database?.isEmpty == true { database = nil }
        if let database, database.contains("/") {
            throw Self.invalid("database name \(Self.mention(database, in: url)) contains '/'; percent-encode it as %2F")
        }

        var timeout = Self.defaultConnectTimeoutSeconds
        if let text = query.removeValue(forKey: "connect_timeout") {
            guard let seconds = Int(text), seconds > 0 else {
                throw Self.invalid("connect_timeout \(Self.mention(text, in: url)) is not a positive whole number of seconds")
            }
            timeout = seconds
        }
        let applicationName = query.removeValue(forKey: "application_name") ?? Self.defaultApplicationName
        var prepares = true
        if let text = query.removeValue(forKey: "prepared_statements") {
            guard let value = ["true": true, "on": true, "1": true, "false": false, "off": false, "0": false][text.lowercased()] else {
                throw Self.invalid("prepared_statements \(Self.mention(text, in: url)) is not true or false")
            }
            prepares = value
        }

        let user = components.user.flatMap { $0.isEmpty ? nil : $0 }
        let password = components.password
        if password != nil, user == nil { throw Self.invalid("a password is given without a user name") }

        self.init(
            host: host, port: port, user: user, password: password, database: database,
            connectTimeoutSeconds: timeout, applicationName: applicationName, options: query, preparesStatements: prepares
        )
    }

    private static func queryParameters(_ components: URLComponents, url: String) throws -> [String: String] {
        var parameters: [String: String] = [:]
        for item in components.queryItems ?? [] {
            let name = item.name
            let shown = mention(name, in: url)
            guard let value = item.value, !value.isEmpty else { throw invalid("parameter \(shown) has no value") }
            guard parameters[name] == nil else { throw invalid("parameter \(shown) is given twice") }
            if ["user", "password", "dbname", "port", "client_encoding"].contains(name) {
                throw invalid("parameter \(shown) is not allowed in the query; put it in the URL itself")
            }
            guard libpqKeywords.contains(name) || name == "prepared_statements" else { throw invalid("unknown connection parameter \(shown)") }
            parameters[name] = value
        }
        return parameters
    }

    /// Every keyword this libpq understands.
    private static let libpqKeywords: Set<String> = {
        guard let options = PQconndefaults() else { return [] }
        defer { PQconninfoFree(options) }
        var keywords: Set<String> = []
        var option = options
        while let keyword = option.pointee.keyword {
            keywords.insert(String(cString: keyword))
            option += 1
        }
        return keywords
    }()

    /// Quotes a piece of the URL for an error message, unless it could be part of a mis-encoded password
    /// (anything that also occurs in the text between `://` and the last `@`).
    private static func mention(_ fragment: String, in url: String) -> String {
        let afterScheme = url.range(of: "://").map { url[$0.upperBound...] } ?? Substring(url)
        let userInfo = afterScheme.lastIndex(of: "@").map { afterScheme[..<$0] } ?? ""
        if !userInfo.isEmpty, userInfo.contains(fragment) { return "(value hidden: it overlaps the user info)" }
        return "'\(fragment)'"
    }

    private static func invalid(_ message: String) -> PostgresError {
        PostgresError(code: .invalidURL, what: "parse the database URL", message: message)
    }
}
