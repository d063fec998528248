import Foundation
import Telemetry
import TestSupport
import Testing

/// The multi-call `countdown` (the image's one executable): runs the command named by the link it was started
/// through or by its first argument, exactly as that command's own executable; anything else, the development
/// executables (fake FCM, benchmark) included, is a usage error (2).
@Suite struct MultiCallTests {
    static let environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
    static let commands = ["worker", "admin", "api", "console"]

    @Test(arguments: commands)
    func aLinkNamedAfterACommandRunsThatCommand(_ command: String) async throws {
        let directory = URL(fileURLWithPath: TestEnvironment.scratchDirectory).appendingPathComponent(TestEnvironment.uniqueName("multi-call"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let link = directory.appendingPathComponent("countdown-\(command)")
        try FileManager.default.createSymbolicLink(
            atPath: link.path, withDestinationPath: TestEnvironment.productsDirectory.appendingPathComponent("countdown").path)
        let run = try await AdminRun.launch(["--version"], environment: Self.environment, timeout: .seconds(30), program: link.path)
        #expect(run.status == 0, "\(run)")
        #expect(run.stdout == "countdown-\(command) \(BuildInfo.version)\n", "\(run)")
    }

    @Test(arguments: commands)
    func theFirstArgumentNamesTheCommand(_ command: String) async throws {
        for name in [command, "countdown-\(command)"] {
            let run = try await AdminRun.launch([name, "--version"], environment: Self.environment, timeout: .seconds(30), program: "countdown")
            #expect(run.status == 0, "\(run)")
            #expect(run.stdout == "countdown-\(command) \(BuildInfo.version)\n", "\(run)")
        }
    }

    @Test func theCommandGetsTheRestOfTheArguments() async throws {
        // The worker takes no argument: the same usage error (2) and line as countdown-worker's own.
        let worker = try await AdminRun.launch(["worker", "extra"], environment: Self.environment, timeout: .seconds(30), program: "countdown")
        #expect(worker.status == 2, "\(worker)")
        #expect(worker.stderr == "countdown-worker: unexpected argument extra; it is configured by the environment\n", "\(worker)")
        let admin = try await AdminRun.launch(["admin", "--help"], environment: Self.environment, timeout: .seconds(30), program: "countdown")
        #expect(admin.status == 0, "\(admin)")
        #expect(admin.stdout.hasPrefix("usage: countdown-admin "), "\(admin)")
    }

    @Test func anUnknownOrMissingCommandIsAUsageError() async throws {
        for arguments in [["bogus"], [], ["--bogus"], ["countdown-bench"], ["fake-fcm", "--help"], ["countdown-fake-fcm"]] {
            let run = try await AdminRun.launch(arguments, environment: Self.environment, timeout: .seconds(30), program: "countdown")
            #expect(run.status == 2, "\(run)")
            #expect(run.stdout.isEmpty, "\(run)")
            #expect(run.stderr.hasPrefix("countdown: "), "\(run)")
            #expect(run.stderr.contains("usage: countdown <command>"), "\(run)")
        }
    }

    @Test func versionAndHelp() async throws {
        let version = try await AdminRun.launch(["--version"], environment: Self.environment, timeout: .seconds(30), program: "countdown")
        #expect(version.status == 0 && version.stdout == "countdown \(BuildInfo.version)\n", "\(version)")
        for flag in ["help", "--help", "-h"] {
            let help = try await AdminRun.launch([flag], environment: Self.environment, timeout: .seconds(30), program: "countdown")
            #expect(help.status == 0, "\(help)")
            for command in Self.commands { #expect(help.stdout.contains("  \(command) "), "\(help)") }
        }
    }
}
