/// Where and how to connect: parsed from a `postgres://` URL, validated, with safe defaults.
///
/// `description` and the mirror never show the password.
public struct PostgresConfiguration: Sendable, Equatable {
    /// Host name, IP address, or a Unix socket directory (from `?host=` when the URL has no host).
    public var host: String
    public var port: Int
    public var user: String?
    public var password: String?
    /// Database name; libpq uses the user name when it is nil.
    public var database: String?
    /// Seconds libpq waits for a connection before giving up (libpq counts anything below 2 as 2).
    public var connectTimeoutSeconds: Int
    /// Shown in `pg_stat_activity.application_name`.
    public var applicationName: String
    /// Further libpq connection keywords from the URL's query (`sslmode`, `keepalives_idle`, ...).
    public var options: [String: String]
    /// Whether sessions prepare each statement once and run it by name (default). Turn off
    /// (`?prepared_statements=false`) behind a pooler in transaction mode that cannot carry named statements.
    public var preparesStatements: Bool
    /// Server settings applied to every session at connect (sent as libpq `options=-c name=value`, after any
    /// `options` from the URL), e.g. `statement_timeout` and `lock_timeout`. Names are PostgreSQL setting
    /// names; values are sent as given (spaces and backslashes escaped).
    public var sessionSettings: [String: String] = [:]

    public static let defaultPort = 5432
    public static let defaultConnectTimeoutSeconds = 5
    public static let defaultApplicationName = "countdown"

    public init(
        host: String, port: Int = defaultPort, user: String? = nil, password: String? = nil, database: String? = nil,
        connectTimeoutSeconds: Int = defaultConnectTimeoutSeconds, applicationName: String = defaultApplicationName,
        options: [String: String] = [:], preparesStatements: Bool = true
    ) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.applicationName = applicationName
        self.options = options
        self.preparesStatements = preparesStatements
    }

    /// `host:port/database`, for errors and logs.
    public var endpoint: String { "\(host):\(port)/\(database ?? user ?? "")" }

    /// Keyword/value pairs for `PQconnectdbParams`.
    var libpqParameters: [(String, String)] {
        var parameters: [(String, String)] = [("host", host), ("port", String(port))]
        if let user { parameters.append(("user", user)) }
        if let password { parameters.append(("password", password)) }
        if let database { parameters.append(("dbname", database)) }
        parameters.append(("connect_timeout", String(connectTimeoutSeconds)))
        parameters.append(("application_name", applicationName))
        parameters.append(("client_encoding", "UTF8"))
        // Notice a peer that vanished without closing the socket within about a minute.
        let keepalives = ["keepalives": "1", "keepalives_idle": "30", "keepalives_interval": "10", "keepalives_count": "3"]
        for (key, value) in keepalives.sorted(by: { $0.key < $1.key }) where options[key] == nil {
            parameters.append((key, value))
        }
        var merged = options
        if !sessionSettings.isEmpty {
            let settings = sessionSettings.sorted { $0.key < $1.key }
                .map { "-c \($0.key)=\(Self.escapeOptionValue($0.value))" }.joined(separator: " ")
            merged["options"] = [options["options"], settings].compactMap { $0 }.joined(separator: " ")
        }
        parameters.append(contentsOf: merged.sorted(by: { $0.key < $1.key }).map { ($0.key, $0.value) })
        return parameters
    }

    /// `statement_timeout` and `lock_timeout` in milliseconds on every session (0 turns a limit off).
    public mutating func setTimeouts(statementMilliseconds: Int, lockMilliseconds: Int) {
        sessionSettings["statement_timeout"] = String(statementMilliseconds)
        sessionSettings["lock_timeout"] = String(lockMilliseconds)
    }

    /// libpq splits `options` on spaces; a backslash escapes the next character.
    static func escapeOptionValue(_ value: String) -> String {
        var escaped = ""
        for character in value {
            if character == " " || character == "\\" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }
}

extension PostgresConfiguration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The URL with the password masked.
    public var description: String {
        var userInfo = user ?? ""
        if password != nil { userInfo += ":***" }
        if !userInfo.isEmpty { userInfo += "@" }
        let shownHost = host.contains(":") ? "[\(host)]" : host
        var text = "postgres://\(userInfo)\(shownHost):\(port)/\(database ?? "")"
        let query = options.sorted(by: { $0.key < $1.key }).map { "\($0.key)=\($0.key.contains("password") ? "***" : $0.value)" }
        if !query.isEmpty { text += "?" + query.joined(separator: "&") }
        return text
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror { Mirror(self, children: ["url": description]) }
}
