import Foundation
import Telemetry
import Testing

/// Every executable answers `--version` with its name and the embedded build version, before reading any
/// configuration (none is given here).
@Suite struct VersionFlagTests {
    static let programs = ["countdown-worker", "countdown-admin", "countdown-api", "countdown-console", "countdown-fake-fcm", "countdown-bench", "countdown"]

    @Test(arguments: programs)
    func versionPrintsTheBuildVersionAndExitsZero(_ program: String) async throws {
        let environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
        let run = try await AdminRun.launch(["--version"], environment: environment, timeout: .seconds(30), program: program)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout == "\(program) \(BuildInfo.version)\n", "\(run)")
        #expect(run.stderr.isEmpty, "\(run)")
    }
}
