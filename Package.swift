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
        // The image's one executable: the production commands (worker, admin, API, console), chosen by the name it runs
        // as. The fake FCM and the benchmark are development executables, outside the production image.
        .executable(name: "countdown", targets: ["countdown"]),
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

        // Pure shared vocabulary: JSON values, parsing and the one string escaper; HTTP header fields; the one calendar routine.
        .target(name: "JSON"),
        .target(name: "HTTPTypes"),
        .target(name: "CivilTime"),

        // Clients: the only code that touches the C APIs.
        .target(name: "Postgres", dependencies: ["CLibPQ", "BlockingIO", "CivilTime"]),
        .target(name: "Redis", dependencies: ["CHiredis", "COpenSSL", "BlockingIO"]),
        .target(name: "JWT", dependencies: ["COpenSSL", "JSON"]),
        .target(name: "HTTPClient", dependencies: ["CCurl", "BlockingIO", "HTTPTypes"]),
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD", "HTTPTypes"]),

        // Logs, metrics and the build's version (Sources/Telemetry/VERSION, embedded at compile time).
        .target(name: "Telemetry", dependencies: ["CivilTime", "JSON"], resources: [.embedInCode("VERSION")]),

        // How long-running parts live: services started and stopped as a group, shutdown signals, permits.
        .target(name: "Lifecycle", dependencies: ["BlockingIO", "Telemetry"]),

        // The Redis delayed queue (knows ids, kinds, payload bytes, due times; nothing about streams).
        .target(name: "DelayQueue", dependencies: ["BlockingIO", "Redis"]),

        // Push: payload builders (pure) and transports (FCM, APNs, log) that know nothing about the queue.
        .target(name: "PushPayloads", dependencies: ["JSON"]),
        // The token guard's rule and its fleet-wide window in Redis: the worker's guard and the console's fleet page.
        .target(name: "PushGuard", dependencies: ["Redis"]),
        .target(name: "Push", dependencies: ["BlockingIO", "HTTPClient", "HTTPTypes", "JSON", "JWT", "PushGuard", "Redis", "Telemetry"]),

        // Reading and validating the environment (one line per problem, naming the variable).
        .target(name: "Configuration", dependencies: ["Telemetry"]),

        // The domain, pure: jobs and their ids, the planner, eligibility, window decisions, handler outcomes.
        // Imports no I/O module.
        .target(name: "CountdownDomain", dependencies: ["JSON", "PushPayloads"]),

        // All of the flows' SQL: the schema and its migrations, and one store per concern (ledger, stream
        // snapshots, sessions, reminders, outbox, progress, device tokens).
        .target(name: "CountdownStore", dependencies: ["BlockingIO", "CountdownDomain", "Postgres", "PushPayloads"]),

        // Stream commands shared by countdown-admin and countdown-api (cancel, set-status, reschedule): their SQL is the store's.
        .target(name: "CountdownCommands", dependencies: ["CountdownDomain", "CountdownStore", "Postgres"]),

        // The handlers: start, backfill, end/update, reminder and expire fan-outs over the stores and a push gateway.
        .target(name: "CountdownFlows", dependencies: ["BlockingIO", "CountdownDomain", "CountdownStore", "Lifecycle", "PushPayloads", "Telemetry"]),

        // What the worker, countdown-admin and countdown-console share without the push stack: the configuration, the
        // reconciler, and the operator's reports and actions (stats, a stream's report, ending a stream, quarantine,
        // token invalidations).
        .target(name: "CountdownMaintenance", dependencies: [
            "CivilTime", "Configuration", "CountdownCommands", "CountdownDomain", "CountdownStore", "DelayQueue", "HTTPTypes", "Lifecycle", "Postgres", "Redis", "Telemetry",
        ]),

        // The worker runtime: dispatcher, outbox relay, health server, service group, push transports.
        .target(name: "CountdownWorker", dependencies: [
            "BlockingIO", "Configuration", "CountdownDomain", "CountdownFlows", "CountdownMaintenance", "CountdownStore", "DelayQueue", "HTTPClient",
            "HTTPServer", "HTTPTypes", "JSON", "JWT", "Lifecycle", "Postgres", "Push", "PushGuard", "PushPayloads", "Redis", "Telemetry",
        ]),

        // What countdown-admin does beyond parsing: connections, reports, stats, demo rows. No push stack, no HTTP.
        .target(name: "CountdownAdmin", dependencies: [
            "Configuration", "CountdownCommands", "CountdownDomain", "CountdownMaintenance", "CountdownStore", "DelayQueue", "Postgres",
            "Redis", "Telemetry",
        ]),

        // The integration guide's HTTP API (device tokens, runtime sessions, cancel), as a testable library; its SQL is the store's.
        .target(name: "CountdownAPI", dependencies: [
            "BlockingIO", "Configuration", "CountdownCommands", "CountdownStore", "HTTPServer", "JSON", "JWT", "Lifecycle", "Postgres", "Telemetry",
        ]),

        // The operator console (SPEC 11): pages, authentication, CSRF, actions with audit; SQL in CountdownStore.
        .target(name: "CountdownConsole", dependencies: [
            "CivilTime", "Configuration", "CountdownAPI", "CountdownCommands", "CountdownDomain", "CountdownMaintenance", "CountdownStore", "DelayQueue",
            "HTTPServer", "JWT", "Postgres", "PushGuard", "Redis", "Telemetry",
        ]),

        // Each executable's code as a library with one entry (`<Name>Main.run(arguments:)`), so that the executables
        // below and the multi-call `countdown` run the same code.
        .target(name: "WorkerCommand", dependencies: ["Configuration", "CountdownMaintenance", "CountdownWorker", "Telemetry"]),
        .target(name: "AdminCommand", dependencies: [
            "Configuration", "CountdownAdmin", "CountdownCommands", "CountdownDomain", "CountdownMaintenance", "CountdownStore", "DelayQueue",
            "Postgres", "Redis", "Telemetry",
        ]),
        .target(name: "FakeFCMCommand", dependencies: ["BlockingIO", "HTTPServer", "JSON", "JWT", "Telemetry"]),
        .target(name: "APICommand", dependencies: ["Configuration", "CountdownAPI", "HTTPServer", "JWT", "Lifecycle", "Postgres", "Telemetry"]),
        .target(name: "ConsoleCommand", dependencies: [
            "Configuration", "CountdownAPI", "CountdownConsole", "CountdownDomain", "CountdownMaintenance", "DelayQueue", "HTTPServer", "Lifecycle", "Postgres", "PushGuard",
            "Redis", "Telemetry",
        ]),

        // Executables: thin mains over the command libraries (development, tests), and the multi-call `countdown`.
        .executableTarget(name: "countdown-worker", dependencies: ["WorkerCommand"]),
        .executableTarget(name: "countdown-admin", dependencies: ["AdminCommand"]),
        .executableTarget(name: "countdown-fake-fcm", dependencies: ["FakeFCMCommand"]),
        .executableTarget(name: "countdown-api", dependencies: ["APICommand"]),
        .executableTarget(name: "countdown-console", dependencies: ["ConsoleCommand"]),
        .executableTarget(name: "countdown", dependencies: ["AdminCommand", "APICommand", "ConsoleCommand", "Telemetry", "WorkerCommand"]),
        // The benchmarks; `system` runs the whole system on TestSupport's CountdownSystem (the one executable allowed to
        // depend on TestSupport: scripts/lib/layers.py).
        .executableTarget(name: "countdown-bench", dependencies: [
            "BlockingIO", "DelayQueue", "HTTPClient", "JWT", "Postgres", "Push", "PushPayloads", "Redis", "Telemetry", "TestSupport",
        ]),

        // Starts throwaway PostgreSQL / Redis servers and isolated databases / namespaces for tests.
        // Also a whole system (CountdownSystem: database, Redis namespace, fake FCM, worker processes) for end-to-end and chaos runs.
        // Also the test doubles of production seams: InMemoryDelayQueue, CapturingLogSink.
        .target(name: "TestSupport", dependencies: [
            "BlockingIO", "Postgres",
            "CountdownStore", "DelayQueue", "Redis", "Telemetry",
        ], path: "Tests/TestSupport"),

        .testTarget(name: "BlockingIOTests", dependencies: ["BlockingIO", "TestSupport"]),
        .testTarget(name: "PostgresTests", dependencies: ["BlockingIO", "Postgres", "TestSupport"]),
        .testTarget(name: "RedisTests", dependencies: ["BlockingIO", "Redis", "TestSupport"]),
        .testTarget(name: "DelayQueueTests", dependencies: ["BlockingIO", "DelayQueue", "Redis", "TestSupport"]),
        .testTarget(name: "JWTTests", dependencies: ["JWT", "TestSupport"]),
        .testTarget(name: "JSONTests", dependencies: ["JSON"]),
        // countdown-bench's pure parts: options, the report (against the Python harness' output), /proc and perf parsing.
        .testTarget(name: "CountdownBenchTests", dependencies: ["countdown-bench"]),
        .testTarget(name: "CivilTimeTests", dependencies: ["CivilTime"]),
        .testTarget(name: "PushPayloadsTests", dependencies: ["JSON", "PushPayloads"], resources: [.copy("Golden")]),
        .testTarget(name: "TelemetryTests", dependencies: ["Telemetry", "TestSupport"]),
        .testTarget(name: "PushTests", dependencies: ["BlockingIO", "HTTPClient", "HTTPTypes", "JWT", "Push", "PushGuard", "Redis", "Telemetry", "TestSupport"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "TestSupport"]),
        .testTarget(name: "FakeFCMTests", dependencies: ["HTTPClient", "JWT", "TestSupport"]),
        .testTarget(name: "CountdownDomainTests", dependencies: ["CountdownDomain", "PushPayloads"]),
        // The stores through their public API against real PostgreSQL, one migrated database per test.
        .testTarget(name: "CountdownStoreTests", dependencies: ["CountdownDomain", "CountdownStore", "Postgres", "PushPayloads", "TestSupport"]),
        .testTarget(name: "CountdownFlowsTests", dependencies: [
            "BlockingIO", "CountdownDomain", "CountdownFlows", "CountdownStore", "Lifecycle", "Postgres", "PushPayloads", "Telemetry", "TestSupport",
        ]),
        .testTarget(name: "CountdownWorkerTests", dependencies: [
            "BlockingIO", "Configuration", "CountdownDomain", "CountdownFlows", "CountdownMaintenance", "CountdownStore", "CountdownWorker", "DelayQueue",
            "Lifecycle", "Postgres", "Push",
            "PushPayloads", "Redis", "Telemetry", "TestSupport",
        ]),
        // Real worker processes against real PostgreSQL, Redis and countdown-fake-fcm.
        .testTarget(name: "EndToEndTests", dependencies: [
            "CountdownDomain", "CountdownMaintenance", "CountdownStore", "CountdownWorker", "DelayQueue", "JWT", "Postgres", "Redis", "Telemetry",
            "TestSupport",
        ]),
        // The system harness' own parts (comparisons, the record file, seeding).
        .testTarget(name: "HarnessTests", dependencies: ["TestSupport"]),
        // scripts/soak's churn for 3 minutes (TestSupport's Soak): a target of its own, so scripts/test runs it alone.
        .testTarget(name: "SoakTests", dependencies: ["TestSupport"]),
        .testTarget(name: "AdminTests", dependencies: [
            "CountdownAdmin", "CountdownCommands", "CountdownDomain", "CountdownMaintenance", "CountdownStore", "DelayQueue", "Postgres", "Redis",
            "Telemetry", "TestSupport",
        ]),
        .testTarget(name: "CountdownAPITests", dependencies: [
            "BlockingIO", "Configuration", "CountdownAPI", "CountdownCommands", "CountdownStore", "HTTPServer", "HTTPTypes", "JWT", "Lifecycle", "Postgres",
            "Telemetry", "TestSupport",
        ]),
        .testTarget(name: "ConsoleTests", dependencies: [
            "Configuration", "CountdownAPI", "CountdownConsole", "CountdownDomain", "CountdownMaintenance", "CountdownStore", "DelayQueue", "HTTPServer", "HTTPTypes", "JWT", "Postgres",
            "PushGuard", "Redis", "Telemetry", "TestSupport",
        ]),
        // The scripts/chaos scenarios: faults injected into the whole system (TestSupport's CountdownSystem), quick sizes
        // unless COUNTDOWN_CHAOS=full, and the device model of scenario 20 (pure, unit-tested). Last, as the slowest target.
        .testTarget(name: "ChaosTests", dependencies: ["CountdownStore", "JSON", "JWT", "Postgres", "Redis", "TestSupport"]),
    ]
)
