import CountdownAPI
import CountdownConsole
import CountdownDomain
import CountdownStore
import DelayQueue
import Foundation
import HTTPServer
import HTTPTypes
import Postgres
import Telemetry
import TestSupport

/// A migrated database of the test's own, an in-memory queue and a console behind a proxy at 10.0.0.0/8, where the
/// group `oncall` makes operators. Requests go straight to the service, from `peer`.
struct ConsoleFixture {
    let database: TestDatabase
    let client: PostgresClient
    let queue: InMemoryDelayQueue
    let service: ConsoleService
    let logs: CapturingLogSink

    static let csrfKey = Array("console-tests-csrf-key-0123456789abcdef".utf8)

    static func with(auditLimiter: AuditLimiter = AuditLimiter(), _ body: (ConsoleFixture) async throws -> Void) async throws {
        try await TestDatabase.withFresh(prefix: "console", maxConnections: 4) { database, client in
            _ = try await Migrator().migrate(client)
            let queue = InMemoryDelayQueue()
            let logs = CapturingLogSink()
            let backend = ConsoleBackend(
                database: client, queue: queue,
                probe: nil, settings: FlowSettings(), transport: .fcm)
            let authenticator = ConsoleAuthenticator(
                mode: .proxy(userHeader: "X-Forwarded-User", groupsHeader: "X-Forwarded-Groups", trusted: try TrustedProxies(parsing: "10.0.0.0/8")),
                operatorGroups: ["oncall"])
            let service = ConsoleService(backend: backend, authenticator: authenticator, csrf: CSRFTokens(key: csrfKey),
                                         metrics: ConsoleMetrics(registry: MetricsRegistry()), logger: Logger(level: .debug, sink: logs),
                                         auditLimiter: auditLimiter)
            try await body(ConsoleFixture(database: database, client: client, queue: queue, service: service, logs: logs))
        }
    }

    struct Reply {
        let status: Int
        let headers: HTTPHeaders
        let body: String
        var json: [String: Any] { ((try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any]) ?? [:] }
    }

    enum Who {
        case `operator`, viewer, untrusted
        var headers: [(String, String)] {
            switch self {
            case .operator, .untrusted: [("X-Forwarded-User", "ada"), ("X-Forwarded-Groups", "staff,oncall")]
            case .viewer: [("X-Forwarded-User", "vic"), ("X-Forwarded-Groups", "staff")]
            }
        }
        var peer: String { self == .untrusted ? "192.168.7.7:40000" : "10.1.1.1:40000" }
    }

    func get(_ path: String, as who: Who = .operator, json: Bool = false, query: [(String, String)] = [],
             extraHeaders: [(String, String)] = []) async -> Reply {
        var headers = headers(who, json: json)
        for (name, value) in extraHeaders { headers.add(name, value) }
        return await send(HTTPRequest(method: "GET", path: path, query: query.map { (name: $0.0, value: $0.1) }, headers: headers,
                                      remoteAddress: who.peer))
    }

    func post(_ path: String, as who: Who = .operator, json: Bool = false, form: [(String, String)]) async -> Reply {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let body = form.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
        var headers = headers(who, json: json)
        headers["Content-Type"] = "application/x-www-form-urlencoded"
        return await send(HTTPRequest(method: "POST", path: path, headers: headers, body: Data(body.utf8), remoteAddress: who.peer))
    }

    private func headers(_ who: Who, json: Bool) -> HTTPHeaders {
        HTTPHeaders(who.headers.map { (name: $0.0, value: $0.1) } + (json ? [(name: "Accept", value: "application/json")] : []))
    }

    private func send(_ request: HTTPRequest) async -> Reply {
        let response = await service.respond(to: request)
        return Reply(status: response.status, headers: response.headers, body: String(decoding: response.body, as: UTF8.self))
    }

    /// A CSRF token for the operator `ada`, from a confirmation page's JSON.
    func csrfToken(for path: String) async -> String {
        (await get(path, json: true).json["csrfToken"] as? String) ?? ""
    }

    func sql(_ statement: String, _ parameters: [(any PostgresEncodable)?] = []) async throws {
        try await client.execute(statement, parameters)
    }

    /// Several statements, no parameters.
    func script(_ statements: String) async throws {
        try await client.withConnection { try $0.executeScript(statements) }
    }

    func value<T: PostgresDecodable & Sendable>(_ statement: String, _ parameters: [(any PostgresEncodable)?] = [], as type: T.Type = T.self) async throws -> T? {
        try await client.query(statement, parameters).first?.decode(0, as: T.self)
    }

    func auditRows() async throws -> [AuditQueries.Entry] {
        try await client.withConnection { try AuditQueries.list(limit: 100, on: $0) }
    }

    /// Ledger rows of the seed's stream: both of u1's starts sent `minutesAgo` minutes ago.
    func startsSent(minutesAgo: Int) async throws {
        try await sql("""
            INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status, attempts, sent_at)
            SELECT 's1', 'u1', d, 'sent', 1, now() - make_interval(mins => $1::int) FROM unnest(ARRAY['d1', 'd2']) AS d
            """, [minutesAgo])
    }

    /// A creator with an iOS device and an Android device, a guest without devices, and a scheduled stream.
    /// `users: false` adds only the stream (the people are there already).
    func seed(stream: String = "s1", title: String = "Launch", users: Bool = true) async throws {
        if users {
            try await sql("INSERT INTO users (id, display_name) VALUES ('u1', 'Selin'), ('u2', 'Mert')")
            try await sql("""
                INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token)
                VALUES ('d1', 'u1', 'ios', 'fcm-token-aaaaaaaaaaaa-FCMLAST8', 'pts-token-bbbbbbbbbbbb-PTSLAST8'),
                       ('d2', 'u1', 'android', 'fcm-token-cccccccccccc-ANDLAST8', NULL)
                """)
        }
        try await sql("INSERT INTO streams (id, title, planned_start_at) VALUES ($1, $2, now() + interval '2 hours')", [stream, title])
        try await sql("INSERT INTO stream_participants (stream_id, user_id, role) VALUES ($1, 'u1', 'creator'), ($1, 'u2', 'guest')", [stream])
    }
}
