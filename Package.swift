// swift-tools-version:6.0
import PackageDescription

// The layout is the architecture: C shims → clients (Postgres, Redis, HTTP) → queue and push →
// domain flows (CountdownCore) → executables. No package dependencies: only the toolchain and
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

        // Clients: the only code that touches the C APIs.
        .target(name: "Postgres", dependencies: ["CLibPQ", "BlockingIO"]),
        .target(name: "Redis", dependencies: ["CHiredis", "COpenSSL", "BlockingIO"]),
        .target(name: "JWT", dependencies: ["COpenSSL"]),
        .target(name: "HTTPClient", dependencies: ["CCurl", "BlockingIO"]),
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD"]),

        // Logs and metrics.
        .target(name: "Telemetry"),

        // The Redis delayed queue (knows ids, kinds, payload bytes, due times; nothing about streams).
        .target(name: "DelayQueue", dependencies: ["Redis"]),

        // Push: payload builders (pure) and transports (FCM, APNs, log) that know nothing about the queue.
        .target(name: "PushPayloads"),
        .target(name: "Push", dependencies: ["BlockingIO", "HTTPClient", "JWT", "Redis", "Telemetry"]),

        // The domain: configuration, schema, flows, outbox relay, reconciler, handlers.
        .target(name: "CountdownCore", dependencies: [
            "Postgres", "Redis", "DelayQueue", "Push", "PushPayloads", "Telemetry", "HTTPServer",
        ]),

        // The integration guide's HTTP API (device tokens, runtime sessions, cancel), as a testable library.
        .target(name: "CountdownAPI", dependencies: ["BlockingIO", "CountdownCore", "HTTPServer", "JWT", "Postgres", "Telemetry"]),

        // Executables.
        .executableTarget(name: "countdown-worker", dependencies: ["CountdownCore"]),
        .executableTarget(name: "countdown-admin", dependencies: ["CountdownCore"]),
        .executableTarget(name: "countdown-fake-fcm", dependencies: ["HTTPServer", "JWT", "Telemetry"]),
        .executableTarget(name: "countdown-api", dependencies: ["CountdownAPI"]),
        .executableTarget(name: "countdown-bench", dependencies: ["DelayQueue", "Push", "Redis", "Telemetry"]),

        // Starts throwaway PostgreSQL / Redis servers and isolated databases / namespaces for tests.
        .target(name: "TestSupport", dependencies: ["BlockingIO", "Postgres", "Redis"], path: "Tests/TestSupport"),

        .testTarget(name: "BlockingIOTests", dependencies: ["BlockingIO"]),
        .testTarget(name: "PostgresTests", dependencies: ["BlockingIO", "Postgres", "TestSupport"]),
        .testTarget(name: "RedisTests", dependencies: ["Redis", "TestSupport"]),
        .testTarget(name: "DelayQueueTests", dependencies: ["DelayQueue", "TestSupport"]),
        .testTarget(name: "JWTTests", dependencies: ["JWT"]),
        .testTarget(name: "PushPayloadsTests", dependencies: ["PushPayloads"], resources: [.copy("Golden")]),
        .testTarget(name: "TelemetryTests", dependencies: ["Telemetry"]),
        .testTarget(name: "PushTests", dependencies: ["BlockingIO", "Push", "JWT", "HTTPClient", "TestSupport"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "HTTPClient"]),
        .testTarget(name: "FakeFCMTests", dependencies: ["HTTPServer", "JWT", "TestSupport"]),
        .testTarget(name: "CountdownCoreTests", dependencies: ["BlockingIO", "CountdownCore", "Postgres", "PushPayloads", "Redis", "Telemetry", "TestSupport"]),
        // Real worker processes against real PostgreSQL, Redis and countdown-fake-fcm.
        .testTarget(name: "EndToEndTests", dependencies: ["CountdownCore", "Postgres", "Redis", "TestSupport"]),
        .testTarget(name: "AdminTests", dependencies: ["CountdownCore", "Postgres", "Redis", "DelayQueue", "TestSupport"]),
        .testTarget(name: "CountdownAPITests", dependencies: ["BlockingIO", "CountdownAPI", "Postgres", "TestSupport"]),
    ]
)
