import Foundation

/// What `scripts/test` hands the tests: the shared throwaway servers and where to find server binaries.
public enum TestEnvironment {
    /// URL of the shared PostgreSQL server (a superuser on the `postgres` database).
    public static var databaseURL: String { required("COUNTDOWN_TEST_DATABASE_URL") }
    /// URL of the shared Redis server; tests isolate themselves with their own namespace.
    public static var redisURL: String { required("COUNTDOWN_TEST_REDIS_URL") }
    /// Directory holding `initdb` and `pg_ctl`, for tests that need a server of their own (restarts).
    public static var postgresBin: String { required("COUNTDOWN_TEST_PG_BIN") }
    /// OS user the PostgreSQL server runs as (initdb refuses root).
    public static var postgresUser: String { ProcessInfo.processInfo.environment["COUNTDOWN_TEST_PG_USER"] ?? NSUserName() }
    /// Path of `redis-server`, for tests that need a server of their own.
    public static var redisServer: String { required("COUNTDOWN_TEST_REDIS_SERVER") }
    /// Scratch directory owned by this test run.
    public static var scratchDirectory: String {
        ProcessInfo.processInfo.environment["COUNTDOWN_TEST_TMPDIR"] ?? NSTemporaryDirectory()
    }

    /// A name no other test uses: `prefix_<random>` (lowercase, safe as a database name or key prefix).
    public static func uniqueName(_ prefix: String) -> String {
        let random = UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
        return "\(prefix)_\(random)"
    }

    /// Directory of the built executables (`countdown-worker`, `countdown-fake-fcm`, ...).
    public static var productsDirectory: URL {
        if let explicit = ProcessInfo.processInfo.environment["COUNTDOWN_TEST_PRODUCTS"] {
            return URL(fileURLWithPath: explicit)
        }
        // The test bundle lives in .build/<config>/; executables are its siblings.
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("countdown-worker").path) { return url }
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(".build/debug")
    }

    /// Directory of the executables a whole-system run starts (`CountdownSystem`): `COUNTDOWN_SYSTEM_BIN_DIR` when set
    /// (scripts/chaos and scripts/bench-system point it at a release build), else `productsDirectory`.
    public static var systemBinDirectory: URL {
        if let explicit = ProcessInfo.processInfo.environment["COUNTDOWN_SYSTEM_BIN_DIR"], !explicit.isEmpty {
            return URL(fileURLWithPath: explicit)
        }
        return productsDirectory
    }

    private static func required(_ name: String) -> String {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else {
            fatalError("\(name) is not set: run the tests with scripts/test, which starts the servers they need")
        }
        return value
    }
}
