import HTTPServer
import Telemetry

/// Flags and environment of `countdown-fake-fcm` and `countdown-fake-fcm apns`; a flag wins over its variable.
struct FakeOptions: Sendable {
    var address = "127.0.0.1:0"
    /// An inherited socket, already bound and listening, to serve instead of binding `address`.
    var listenDescriptor: Int32?
    var recordPath: String?
    /// 0: each record line is written before its answer; more: lines are gathered and written this often (FCM).
    var recordFlushMilliseconds = 0
    var threads = 8
    var keep = 100_000
    var keepRequests = 100
    var logLevel = LogLevel.info
    /// The fake FCM's service account and access token lifetime.
    var serviceAccountPath = ""
    var tokenLifetime = 3600
    /// The fake APNs' key, the provider token's ids, the app, the channel management host and the channel limit.
    var keyFile = ""
    var keyID = ""
    var teamID = ""
    var bundleID = ""
    var channelHost: String?
    var maxChannels = 10_000

    static func usage(_ service: FakeService) -> String { service == .fcm ? fcmUsage : apnsUsage }

    static let fcmUsage = """
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

    static let apnsUsage = """
        usage: countdown-fake-fcm apns --key <AuthKey.p8> --key-id <id> --team-id <id> --bundle-id <id> [options]

        A stand-in for APNs (token pushes, broadcasts, channel management) speaking HTTP/1.1: put nghttpx in front
        for HTTP/2 over TLS, as APNs speaks (see docs/testing.md).
          --addr <host:port>           listen address (FAKE_APNS_ADDR, default 127.0.0.1:0 = a free port)
          --listen-fd <n>              serve the inherited socket <n>, already bound and listening (FAKE_APNS_LISTEN_FD)
          --key <file>                 the .p8 key (or its public key) that verifies provider tokens (APNS_KEY_FILE)
          --key-id <id>                the provider token's kid (APNS_KEY_ID)
          --team-id <id>               the provider token's iss (APNS_TEAM_ID)
          --bundle-id <id>             the app: apns-topic <id>.push-type.liveactivity, /4/broadcasts/apps/<id>,
                                       /1/apps/<id>/channels (APNS_BUNDLE_ID)
          --channel-host <host:port>   the Host channel management is sent to, as Apple's separate host: channel
                                       requests elsewhere, and pushes or broadcasts there, get 404 BadPath
                                       (FAKE_APNS_CHANNEL_HOST; default: every endpoint on any host)
          --record <file.jsonl>        append every accepted push and broadcast as a JSON line (FAKE_APNS_RECORD)
          --max-channels <n>           channels alive before CannotCreateChannelConfig (FAKE_APNS_MAX_CHANNELS, default 10000)
          --threads <n>                server threads (FAKE_APNS_THREADS, default 8)
          --keep <n>                   accepted pushes kept in memory (FAKE_APNS_KEEP, default 100000)
          --keep-requests <n>          newest requests of each endpoint kept with their answers (FAKE_APNS_KEEP_REQUESTS, default 100)
        LOG_LEVEL=debug logs every request. Prints {"event":"listening","port":N,...} on stdout once listening.
        """

    /// The options of `service`'s fake, or nil when `--help` was asked for.
    static func parse(_ service: FakeService, arguments: [String], environment: [String: String]) throws(UsageError) -> FakeOptions? {
        let prefix = service.variablePrefix
        var names = ["--addr": "ADDR", "--listen-fd": "LISTEN_FD", "--record": "RECORD", "--threads": "THREADS", "--keep": "KEEP", "--keep-requests": "KEEP_REQUESTS"]
            .mapValues { prefix + $0 }
        switch service {
        case .fcm:
            names.merge(["--service-account": "GOOGLE_APPLICATION_CREDENTIALS", "--record-flush-ms": prefix + "RECORD_FLUSH_MS", "--token-ttl": prefix + "TOKEN_TTL"]) { $1 }
        case .apns:
            names.merge([
                "--key": "APNS_KEY_FILE", "--key-id": "APNS_KEY_ID", "--team-id": "APNS_TEAM_ID", "--bundle-id": "APNS_BUNDLE_ID",
                "--channel-host": prefix + "CHANNEL_HOST", "--max-channels": prefix + "MAX_CHANNELS",
            ]) { $1 }
        }
        guard let values = try read(arguments: arguments, environment: environment, names: names) else { return nil }
        /// An integer flag within `range`, or nil when not given.
        func integer(_ flag: String, _ range: ClosedRange<Int>) throws(UsageError) -> Int? {
            guard let text = values[flag] else { return nil }
            guard let value = Int(text), range.contains(value) else {
                throw UsageError("\(flag) must be an integer in \(range.lowerBound)...\(range.upperBound), got \"\(text)\"")
            }
            return value
        }

        var options = FakeOptions()
        if let address = values["--addr"] {
            do { _ = try HTTPServerAddress(parsing: address) } catch { throw UsageError("--addr / \(prefix)ADDR: \(error)") }
            options.address = address
        }
        switch service {
        case .fcm:
            guard let account = values["--service-account"] else {
                throw UsageError("--service-account (or GOOGLE_APPLICATION_CREDENTIALS) is required")
            }
            options.serviceAccountPath = account
            options.recordFlushMilliseconds = try integer("--record-flush-ms", 0...10_000) ?? 0
            options.tokenLifetime = try integer("--token-ttl", 1...86_400) ?? options.tokenLifetime
        case .apns:
            for (flag, keyPath) in [("--key", \FakeOptions.keyFile), ("--key-id", \.keyID), ("--team-id", \.teamID), ("--bundle-id", \.bundleID)] {
                guard let value = values[flag], !value.isEmpty, !value.contains(where: \.isWhitespace) else {
                    throw UsageError("\(flag) (or \(names[flag] ?? "")) is required, without spaces")
                }
                options[keyPath: keyPath] = value
            }
            options.channelHost = values["--channel-host"]
            options.maxChannels = try integer("--max-channels", 0...1_000_000) ?? options.maxChannels
        }
        options.recordPath = values["--record"]
        options.threads = try integer("--threads", 1...256) ?? options.threads
        options.keep = try integer("--keep", 0...10_000_000) ?? options.keep
        options.keepRequests = try integer("--keep-requests", 0...100_000) ?? options.keepRequests
        options.listenDescriptor = try integer("--listen-fd", 3...65_535).map(Int32.init)
        options.logLevel = try FakeLog.parseLevel(environment["LOG_LEVEL"])
        return options
    }

    /// Flag → value from `arguments` (`--flag value` or `--flag=value`) over `environment` (`names`: flag → variable);
    /// nil when `--help` was asked for.
    private static func read(arguments: [String], environment: [String: String], names: [String: String]) throws(UsageError) -> [String: String]? {
        var values: [String: String] = [:]
        for (flag, variable) in names {
            if let value = environment[variable], !value.isEmpty { values[flag] = value }
        }
        var index = 0
        while index < arguments.count {
            var flag = arguments[index]
            var value: String?
            if let equals = flag.firstIndex(of: "="), flag.hasPrefix("--") {
                value = String(flag[flag.index(after: equals)...])
                flag = String(flag[..<equals])
            }
            if flag == "--help" || flag == "-h" { return nil }
            guard names[flag] != nil else { throw UsageError("unknown option \(flag) (see --help)") }
            if value == nil {
                index += 1
                guard index < arguments.count else { throw UsageError("\(flag) needs a value") }
                value = arguments[index]
            }
            values[flag] = value
            index += 1
        }
        return values
    }
}
