// swift-tools-version:6.0
import PackageDescription

// The layout is the architecture: C shims → clients (Postgres, Redis, HTTP) → queue and push →
// domain (pure) → stores (SQL) → flows → worker runtime → executables. No package dependencies: only the toolchain and
// Debian C libraries wrapped as system library targets.

let package = Package(
    name: "Countdown",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "countdown-worker", targets: ["countdown-worker"]),
        .executable(name: "countdown-admin", targets: ["countdown-admin"]),
        .executable(name: "countdown-fake-fcm", targets: ["countdown-fake-fcm"]),
        .executable(name: "countdown-bench", targets: ["countdown-bench"]),
        .executable(name: "countdown-api", targets: ["countdown-api"]),
        .executable(name: "countdown-console", targets: ["countdown-console"]),
    ],
    targets: [
        // C libraries (apt packages named so SwiftPM can tell what is missing).
        .systemLibrary(name: "CLibPQ", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CHiredis", providers: [.apt(["libhiredis-dev"])]),
        .systemLibrary(name: "COpenSSL", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CCurl", providers: [.apt(["libcurl4-openssl-dev"])]),

        // Threads the process owns for blocking C calls, and a bounded pool of thread-confined resources.
        .target(name: "BlockingIO"),

        // Pure shared vocabulary: JSON values, parsing and the one string escaper; HTTP header fields.
        .target(name: "JSON"),
        .target(name: "HTTPTypes"),

        // Clients: the only code that touches the C APIs.
        .target(name: "Postgres", dependencies: ["CLibPQ", "BlockingIO"]),
        .target(name: "Redis", dependencies: ["CHiredis", "COpenSSL", "BlockingIO"]),
        .target(name: "JWT", dependencies: ["COpenSSL"]),
        .target(name: "HTTPClient", dependencies: ["CCurl", "BlockingIO", "HTTPTypes"]),
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD", "HTTPTypes"]),

        // Logs, metrics and the build's version (Sources/Telemetry/VERSION, embedded at compile time).
        .target(name: "Telemetry", dependencies: ["JSON"], resources: [.embedInCode("VERSION")]),

        // The Redis delayed queue (knows ids, kinds, payload bytes, due times; nothing about streams).
        .target(name: "DelayQueue", dependencies: ["BlockingIO", "Redis"]),

        // Push: payload builders (pure) and transports (FCM, APNs, log) that know nothing about the queue.
        .target(name: "PushPayloads", dependencies: ["JSON"]),
        .target(name: "Push", dependencies: ["BlockingIO", "HTTPClient", "HTTPTypes", "JSON", "JWT", "Redis"]),

        // Reading and validating the environment (one line per problem, naming the variable).
        .target(name: "Configuration", dependencies: ["Telemetry"]),

        // The domain, pure: jobs and their ids, the planner, eligibility, window decisions, handler outcomes.
        // Imports no I/O module.
        .target(name: "CountdownDomain", dependencies: ["JSON", "PushPayloads"]),

        // All of the flows' SQL: the schema and its migrations, and one store per concern (ledger, stream
        // snapshots, sessions, reminders, outbox, progress, device tokens).
        .target(name: "CountdownStore", dependencies: ["CountdownDomain", "Postgres", "PushPayloads"]),

        // Stream commands shared by countdown-admin and countdown-api (cancel, set-status, reschedule): PostgreSQL only.
        .target(name: "CountdownCommands", dependencies: ["CountdownDomain", "Postgres"]),

        // The handlers: start, backfill, end/update, reminder and expire fan-outs over the stores and a push gateway.
        .target(name: "CountdownFlows", dependencies: ["BlockingIO", "CountdownDomain", "CountdownStore", "Postgres", "PushPayloads", "Telemetry"]),

        // The worker runtime: configuration, dispatcher, outbox relay, reconciler, health server, service group.
        .target(name: "CountdownWorker", dependencies: [
            "BlockingIO", "Configuration", "CountdownDomain", "CountdownFlows", "CountdownStore", "DelayQueue", "HTTPClient",
            "HTTPServer", "JSON", "JWT", "Postgres", "Push", "PushPayloads", "Redis", "Telemetry",
        ]),

        // What countdown-admin does beyond parsing: connections, reports, stats, demo rows.
        .target(name: "CountdownAdmin", dependencies: [
            "Configuration", "CountdownCommands", "CountdownDomain", "CountdownStore", "CountdownWorker", "DelayQueue", "Postgres",
            "Push", "Redis", "Telemetry",
        ]),

        // The integration guide's HTTP API (device tokens, runtime sessions, cancel), as a testable library.
        .target(name: "CountdownAPI", dependencies: ["BlockingIO", "Configuration", "CountdownCommands", "HTTPServer", "JWT", "Postgres", "Telemetry"]),

        // The operator console (SPEC 11): pages, authentication, CSRF, actions with audit; SQL in CountdownStore.
        .target(name: "CountdownConsole", dependencies: [
            "Configuration", "CountdownAdmin", "CountdownAPI", "CountdownDomain", "CountdownStore", "CountdownWorker", "DelayQueue", "HTTPServer",
            "JWT", "Postgres", "Push", "Redis", "Telemetry",
        ]),

        // Executables.
        .executableTarget(name: "countdown-worker", dependencies: ["Configuration", "CountdownWorker", "Telemetry"]),
        .executableTarget(name: "countdown-admin", dependencies: [
            "Configuration", "CountdownAdmin", "CountdownCommands", "CountdownDomain", "CountdownStore", "CountdownWorker", "DelayQueue",
            "Postgres", "Redis",
        ]),
        .executableTarget(name: "countdown-fake-fcm", dependencies: ["BlockingIO", "HTTPServer", "JSON", "JWT", "Telemetry"]),
        .executableTarget(name: "countdown-api", dependencies: ["Configuration", "CountdownAPI", "HTTPServer", "JWT", "Postgres", "Telemetry"]),
        .executableTarget(name: "countdown-console", dependencies: [
            "Configuration", "CountdownAPI", "CountdownConsole", "CountdownDomain", "CountdownWorker", "DelayQueue", "HTTPServer", "Postgres", "Push", "Redis", "Telemetry",
        ]),
        .executableTarget(name: "countdown-bench", dependencies: ["BlockingIO", "DelayQueue", "HTTPClient", "JWT", "Push", "Redis", "Telemetry"]),

        // Starts throwaway PostgreSQL / Redis servers and isolated databases / namespaces for tests.
        .target(name: "TestSupport", dependencies: ["BlockingIO", "Postgres"], path: "Tests/TestSupport"),

        .testTarget(name: "BlockingIOTests", dependencies: ["BlockingIO", "TestSupport"]),
        .testTarget(name: "PostgresTests", dependencies: ["BlockingIO", "Postgres", "TestSupport"]),
        .testTarget(name: "RedisTests", dependencies: ["BlockingIO", "Redis", "TestSupport"]),
        .testTarget(name: "DelayQueueTests", dependencies: ["BlockingIO", "DelayQueue", "Redis", "TestSupport"]),
        .testTarget(name: "JWTTests", dependencies: ["JWT", "TestSupport"]),
        .testTarget(name: "JSONTests", dependencies: ["JSON"]),
        .testTarget(name: "PushPayloadsTests", dependencies: ["JSON", "PushPayloads"], resources: [.copy("Golden")]),
        .testTarget(name: "TelemetryTests", dependencies: ["Telemetry"]),
        .testTarget(name: "PushTests", dependencies: ["BlockingIO", "HTTPClient", "HTTPTypes", "JWT", "Push", "Redis", "TestSupport"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "TestSupport"]),
        .testTarget(name: "FakeFCMTests", dependencies: ["JWT", "TestSupport"]),
        .testTarget(name: "CountdownDomainTests", dependencies: ["CountdownDomain"]),
        .testTarget(name: "CountdownFlowsTests", dependencies: [
            "BlockingIO", "CountdownDomain", "CountdownFlows", "CountdownStore", "Postgres", "PushPayloads", "Telemetry", "TestSupport",
        ]),
        .testTarget(name: "CountdownWorkerTests", dependencies: [
            "BlockingIO", "Configuration", "CountdownDomain", "CountdownFlows", "CountdownStore", "CountdownWorker", "DelayQueue", "Postgres", "Push",
            "PushPayloads", "Redis", "Telemetry", "TestSupport",
        ]),
        // Real worker processes against real PostgreSQL, Redis and countdown-fake-fcm.
        .testTarget(name: "EndToEndTests", dependencies: ["CountdownDomain", "CountdownStore", "CountdownWorker", "DelayQueue", "Postgres", "Redis", "TestSupport"]),
        .testTarget(name: "AdminTests", dependencies: [
            "CountdownAdmin", "CountdownCommands", "CountdownDomain", "CountdownStore", "CountdownWorker", "DelayQueue", "Postgres", "Redis",
            "TestSupport",
        ]),
        .testTarget(name: "CountdownAPITests", dependencies: [
            "BlockingIO", "CountdownAPI", "CountdownCommands", "CountdownStore", "HTTPServer", "HTTPTypes", "JWT", "Postgres", "Telemetry", "TestSupport",
        ]),
        .testTarget(name: "ConsoleTests", dependencies: [
            "CountdownAPI", "CountdownConsole", "CountdownDomain", "CountdownStore", "DelayQueue", "HTTPServer", "HTTPTypes", "JWT", "Postgres",
            "Telemetry", "TestSupport",
        ]),
    ]
)
