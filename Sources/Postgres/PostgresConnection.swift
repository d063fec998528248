import CLibPQ
import Foundation

/// One PostgreSQL session: the only owner of its `PGconn*` (`deinit` calls `PQfinish`).
///
/// Every call blocks, so a connection lives on one thread the process owns (a `SerialThread` or a
/// `ResourcePool` slot) and is used only there; the type is deliberately not `Sendable`.
/// The session runs with `TimeZone` UTC, `DateStyle` ISO and hex `bytea` output, whatever the server's
/// defaults, so decoding never depends on server settings.
public final class PostgresConnection {
    public let configuration: PostgresConfiguration
    private var handle: OpaquePointer?
    private var statements = PreparedStatementCache()
    private let goodbye = PostgresGoodbyeWatch()
    /// The awaiting task's cancellation while a call runs (see `PostgresCancellation`).
    var cancellation: PostgresCancellation?

    /// Opens a session; fails with `connectionFailed` (or `timeout`) within the configured connect timeout.
    public init(configuration: PostgresConfiguration) throws {
        self.configuration = configuration
        handle = Self.connect(configuration)
        try finishConnecting(what: "connect to \(configuration.endpoint)")
    }

    deinit {
        if let handle { PQfinish(handle) }
    }

    /// Whether the session is usable as far as libpq knows (`PQstatus == CONNECTION_OK`) and the server has not
    /// said goodbye to it.
    public var isHealthy: Bool {
        guard let handle else { return false }
        return PQstatus(handle) == CONNECTION_OK && !goodbye.heard
    }

    /// Whether the session is healthy and outside any transaction, so another user may take it over.
    var isReusable: Bool {
        guard isHealthy, let handle else { return false }
        return PQtransactionStatus(handle) == PQTRANS_IDLE
    }

    /// The server process serving this session (`pg_backend_pid()`).
    public var backendProcessID: Int32 {
        guard let handle else { return 0 }
        return PQbackendPID(handle)
    }

    /// Whether a transaction is open (possibly aborted by a failed statement).
    var isInTransaction: Bool {
        guard let handle else { return false }
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
    }

    /// What the server needs to cancel this session's statement in flight, from another thread.
    func makeCancelRequest() -> PostgresCancelRequest? {
        handle.flatMap { PostgresCancelRequest(connection: $0) }
    }

    /// Ends the session now; later calls fail with `closed`.
    public func close() {
        if let handle { PQfinish(handle) }
        handle = nil
        statements.removeAll()
    }

    /// Runs one statement with `$1, $2, ...` parameters and returns its rows.
    public func query(_ sql: String, _ parameters: [(any PostgresEncodable)?] = []) throws -> PostgresRows {
        try run(sql, parameters).rows()
    }

    /// Runs one statement with `$1, $2, ...` parameters and returns how many rows it affected.
    @discardableResult
    public func execute(_ sql: String, _ parameters: [(any PostgresEncodable)?] = []) throws -> Int {
        try run(sql, parameters).affectedRows
    }

    /// Runs a script of several statements without parameters (schema migrations), in the simple query
    /// protocol; the first failing statement's error is thrown.
    public func executeScript(_ sql: String) throws {
        let what = Self.describe(sql)
        let handle = try openHandle(what: what)
        try checkNotCancelled()
        _ = try check(PQexec(handle, sql), what: what)
    }

    /// Quotes `name` as an SQL identifier (for names that cannot be parameters, such as LISTEN channels).
    public func quoteIdentifier(_ name: String) throws -> String {
        let handle = try openHandle(what: "quote an identifier")
        let utf8 = Array(name.utf8)
        guard !utf8.contains(0) else {
            throw PostgresError(code: .invalidParameter, what: "quote an identifier", message: "the name contains a NUL character")
        }
        guard let quoted = PQescapeIdentifier(handle, name, utf8.count) else {
            throw PostgresError.callFailed(nil, connection: handle, what: "quote an identifier")
        }
        defer { PQfreemem(quoted) }
        return String(cString: quoted)
    }

    /// Runs a statement and returns its checked result. Each distinct statement (text and parameter types) is
    /// parsed and planned once per session: it is prepared on first use and executed by name afterwards.
    func run(_ sql: String, _ parameters: [(any PostgresEncodable)?]) throws -> PostgresResult {
        let handle = try openHandle(what: Self.describe(sql))
        try checkNotCancelled()
        let encoded = try PostgresParameters(parameters, what: Self.describe(sql))
        let name = try preparedName(sql, types: encoded.typeOIDs, handle: handle)
        try checkNotCancelled() // a cancel sent while the session sat idle between PREPARE and execute reached nothing
        let result = encoded.withCValues { types, values in
            if let name {
                PQexecPrepared(handle, name, Int32(encoded.count), values, nil, nil, 0)
            } else {
                PQexecParams(handle, sql, Int32(encoded.count), types, values, nil, nil, 0)
            }
        }
        return try check(result, what: Self.describe(sql))
    }

    /// The server-side name of `sql` prepared with `types`, preparing it now if needed; `nil` once the cache is
    /// full (the statement then runs unprepared).
    private func preparedName(_ sql: String, types: [Oid], handle: OpaquePointer) throws -> String? {
        guard configuration.preparesStatements else { return nil }
        let key = PreparedStatementCache.Key(sql: sql, types: types)
        if let name = statements.name(for: key) { return name }
        guard let name = statements.reserveName() else { return nil }
        let result = types.withUnsafeBufferPointer { PQprepare(handle, name, sql, Int32(types.count), $0.baseAddress) }
        _ = try check(result, what: Self.describe(sql))
        statements.insert(key, name: name)
        return name
    }

    /// The one check every statement result goes through: success returns the owned result, anything
    /// else the typed error (frees the result either way).
    func check(_ raw: OpaquePointer?, what: @autoclosure () -> String) throws -> PostgresResult {
        let handle = try openHandle(what: what())
        guard let raw else { throw PostgresError.callFailed(nil, connection: handle, what: what()) }
        let result = PostgresResult(raw)
        switch PQresultStatus(raw) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return result
        default:
            let error = PostgresError.callFailed(raw, connection: handle, what: what())
            if error.sqlState == PostgresError.queryCanceled, cancellation?.isRequested == true { throw CancellationError() }
            throw error
        }
    }

    private func checkNotCancelled() throws {
        if cancellation?.isRequested == true { throw CancellationError() }
    }

    func openHandle(what: @autoclosure () -> String) throws -> OpaquePointer {
        guard let handle else {
            throw PostgresError(code: .closed, what: what(), message: "the connection has been closed")
        }
        return handle
    }

    /// Reconnects with the same parameters when the server has closed this idle session (for example after a
    /// restart); a no-op while the session is fine. Nothing is lost: no statement was in flight.
    func reconnectIfDropped() throws {
        let handle = try openHandle(what: "reconnect to \(configuration.endpoint)")
        // An idle session only receives something when the server is ending it (its goodbye message, then
        // end of file) or a stray notice: read until the socket is quiet or the end shows. The goodbye alone
        // is enough (the end of file may not have arrived yet); PQisBusy parses what was read, which hands it
        // to the goodbye watch.
        for _ in 0..<4 where PQstatus(handle) == CONNECTION_OK && !goodbye.heard {
            guard PostgresSocket.isReadable(PQsocket(handle), timeoutMilliseconds: 0), PQconsumeInput(handle) != 0
            else { break }
            _ = PQisBusy(handle)
        }
        guard PQstatus(handle) != CONNECTION_OK || goodbye.heard else { return }
        PQreset(handle)
        statements.removeAll()
        try finishConnecting(what: "reconnect to \(configuration.endpoint)")
    }

    /// Throws the typed connect error unless the session reached `CONNECTION_OK`, then sets the session up.
    private func finishConnecting(what: String) throws {
        let handle = try openHandle(what: what)
        guard PQstatus(handle) == CONNECTION_OK else { throw PostgresError.connectFailed(handle, what: what) }
        goodbye.install(on: handle)
        let settings = "SET TIME ZONE 'UTC'; SET DateStyle = 'ISO, MDY'; SET bytea_output = 'hex'"
        _ = try check(PQexec(handle, settings), what: "set up the session")
    }

    private static func connect(_ configuration: PostgresConfiguration) -> OpaquePointer? {
        let parameters = configuration.libpqParameters
        let keywords = parameters.map { strdup($0.0) }
        let values = parameters.map { strdup($0.1) }
        defer {
            keywords.forEach { free($0) }
            values.forEach { free($0) }
        }
        let keywordList = keywords.map { UnsafePointer($0) } + [nil]
        let valueList = values.map { UnsafePointer($0) } + [nil]
        return PQconnectdbParams(keywordList, valueList, 0)
    }

    /// `query: <first line of the SQL, shortened>` for errors.
    private static func describe(_ sql: String) -> String {
        let line = sql.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }.joined(separator: " ")
        return "query: " + (line.count > 80 ? line.prefix(77) + "..." : line)
    }
}
