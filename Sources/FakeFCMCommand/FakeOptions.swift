import HTTPServer
import Telemetry

/// Flags and environment of `countdown-fake-fcm`; a flag wins over its variable.
struct FakeOptions: Sendable {
    var address = "127.0.0.1:0"
    /// An inherited socket, already bound and listening, to serve instead of binding `address`.
    var listenDescriptor: Int32?
    var serviceAccountPath: String?
    var recordPath: String?
    /// 0: each record line is written before its answer; more: lines are gathered and written this often.
    var recordFlushMilliseconds = 0
    var tokenLifetime = 3600
    var threads = 8
    var keep = 100_000
    var keepRequests = 100
    var logLevel = LogLevel.info

    static let usage = """
        usage: countdown-fake-fcm --service-account <file.json> [options]

          --addr <host:port>           listen address (FAKE_FCM_ADDR, default 127.0.0.1:0 = a free port)
          --listen-fd <n>              serve the inherited socket <n>, already bound and listening (FAKE_FCM_LISTEN_FD):
                                       a parent that binds the port first (tests) then names it in --addr
          --service-account <file>     the account whose key verifies assertions (GOOGLE_APPLICATION_CREDENTIALS)
          --record <file.jsonl>        append every accepted message as a JSON line (FAKE_FCM_RECORD)
          --record-flush-ms <ms>       gather record lines and write them every <ms> (FAKE_FCM_RECORD_FLUSH_MS,
                                       default 0: each line is written before its answer); for load tests
          --token-ttl <seconds>        access token lifetime (FAKE_FCM_TOKEN_TTL, default 3600)
          --threads <n>                server threads (FAKE_FCM_THREADS, default 8)
          --keep <n>                   accepted messages kept in memory (FAKE_FCM_KEEP, default 100000)
          --keep-requests <n>          newest token requests and sends kept with their answers for
                                       GET /fake/requests (FAKE_FCM_KEEP_REQUESTS, default 100, 0: none)
        LOG_LEVEL=debug logs every request. Prints {"event":"listening","port":N,...} on stdout once listening.
        """

    /// The options, or nil when `--help` was asked for.
    static func parse(arguments: [String], environment: [String: String]) throws(UsageError) -> FakeOptions? {
        var options = FakeOptions()
        let environmentNames = [
            "--addr": "FAKE_FCM_ADDR", "--service-account": "GOOGLE_APPLICATION_CREDENTIALS", "--record": "FAKE_FCM_RECORD",
            "--record-flush-ms": "FAKE_FCM_RECORD_FLUSH_MS",
            "--token-ttl": "FAKE_FCM_TOKEN_TTL", "--threads": "FAKE_FCM_THREADS", "--keep": "FAKE_FCM_KEEP",
            "--keep-requests": "FAKE_FCM_KEEP_REQUESTS", "--listen-fd": "FAKE_FCM_LISTEN_FD",
        ]
        guard let values = try FlagValues.read(arguments: arguments, environment: environment, names: environmentNames) else { return nil }

        if let address = values["--addr"] {
            do {
                _ = try HTTPServerAddress(parsing: address)
            } catch {
                throw UsageError("--addr / FAKE_FCM_ADDR: \(error)")
            }
            options.address = address
        }
        guard let account = values["--service-account"] else {
            throw UsageError("--service-account (or GOOGLE_APPLICATION_CREDENTIALS) is required")
        }
        options.serviceAccountPath = account
        options.recordPath = values["--record"]
        options.recordFlushMilliseconds = try integer(values["--record-flush-ms"], flag: "--record-flush-ms", range: 0...10_000) ?? 0
        options.tokenLifetime = try integer(values["--token-ttl"], flag: "--token-ttl", range: 1...86_400) ?? options.tokenLifetime
        options.threads = try integer(values["--threads"], flag: "--threads", range: 1...256) ?? options.threads
        options.keep = try integer(values["--keep"], flag: "--keep", range: 0...10_000_000) ?? options.keep
        options.keepRequests = try integer(values["--keep-requests"], flag: "--keep-requests", range: 0...100_000) ?? options.keepRequests
        options.listenDescriptor = try integer(values["--listen-fd"], flag: "--listen-fd", range: 3...65_535).map(Int32.init)
        options.logLevel = try FakeLog.parseLevel(environment["LOG_LEVEL"])
        return options
    }

    private static func integer(_ text: String?, flag: String, range: ClosedRange<Int>) throws(UsageError) -> Int? {
        try FlagValues.integer(text, flag: flag, range: range)
    }
}
