import HTTPServer
import Telemetry

/// Flags and environment of `countdown-fake-fcm apns`; a flag wins over its variable.
struct FakeAPNsOptions: Sendable {
    var address = "127.0.0.1:0"
    var listenDescriptor: Int32?
    var keyFile = ""
    var keyID = ""
    var teamID = ""
    var bundleID = ""
    var recordPath: String?
    var channelHost: String?
    var maxChannels = 10_000
    var threads = 8
    var keep = 100_000
    var keepRequests = 100
    var logLevel = LogLevel.info

    static let usage = """
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

    /// The options, or nil when `--help` was asked for.
    static func parse(arguments: [String], environment: [String: String]) throws(UsageError) -> FakeAPNsOptions? {
        let names = [
            "--addr": "FAKE_APNS_ADDR", "--listen-fd": "FAKE_APNS_LISTEN_FD", "--key": "APNS_KEY_FILE", "--key-id": "APNS_KEY_ID",
            "--team-id": "APNS_TEAM_ID", "--bundle-id": "APNS_BUNDLE_ID", "--record": "FAKE_APNS_RECORD", "--channel-host": "FAKE_APNS_CHANNEL_HOST",
            "--max-channels": "FAKE_APNS_MAX_CHANNELS", "--threads": "FAKE_APNS_THREADS", "--keep": "FAKE_APNS_KEEP",
            "--keep-requests": "FAKE_APNS_KEEP_REQUESTS",
        ]
        guard let values = try FlagValues.read(arguments: arguments, environment: environment, names: names) else { return nil }
        var options = FakeAPNsOptions()
        if let address = values["--addr"] {
            do { _ = try HTTPServerAddress(parsing: address) } catch { throw UsageError("--addr / FAKE_APNS_ADDR: \(error)") }
            options.address = address
        }
        for (flag, variable, keyPath) in [
            ("--key", "APNS_KEY_FILE", \FakeAPNsOptions.keyFile), ("--key-id", "APNS_KEY_ID", \.keyID), ("--team-id", "APNS_TEAM_ID", \.teamID),
            ("--bundle-id", "APNS_BUNDLE_ID", \.bundleID),
        ] {
            guard let value = values[flag], !value.isEmpty, !value.contains(where: \.isWhitespace) else {
                throw UsageError("\(flag) (or \(variable)) is required, without spaces")
            }
            options[keyPath: keyPath] = value
        }
        options.recordPath = values["--record"]
        options.channelHost = values["--channel-host"]
        options.maxChannels = try FlagValues.integer(values["--max-channels"], flag: "--max-channels", range: 0...1_000_000) ?? options.maxChannels
        options.threads = try FlagValues.integer(values["--threads"], flag: "--threads", range: 1...256) ?? options.threads
        options.keep = try FlagValues.integer(values["--keep"], flag: "--keep", range: 0...10_000_000) ?? options.keep
        options.keepRequests = try FlagValues.integer(values["--keep-requests"], flag: "--keep-requests", range: 0...100_000) ?? options.keepRequests
        options.listenDescriptor = try FlagValues.integer(values["--listen-fd"], flag: "--listen-fd", range: 3...65_535).map(Int32.init)
        options.logLevel = try FakeLog.parseLevel(environment["LOG_LEVEL"])
        return options
    }
}
