import Foundation
import TestSupport
import Testing

/// Destructive commands: `--yes` or a terminal's "y", never silently (here stdin is not a terminal unless a
/// pseudo-terminal is made with util-linux `script`).
@Suite struct ConfirmationTests {
    static let destructive: [(arguments: [String], command: String)] = [
        (["cancel", "s1"], "cancel"), (["cancel", "s1", "--json"], "cancel"), (["set-status", "s1", "expired"], "set-status"),
        (["dead", "drop", "mystery:1"], "dead drop"),
    ]

    @Test func withoutATerminalOrYesTheyExitTwoWithOneLineAndChangeNothing() async throws {
        try await AdminFixture.with { fixture in
            try await StreamStatusCommandTests.arrangeBusyStream(fixture, "s1")
            try await fixture.deadLetter("mystery:1")
            for (arguments, command) in Self.destructive {
                let run = try await fixture.admin(arguments)
                #expect(run.status == 2, "\(run)")
                #expect(run.errorLines == ["countdown-admin: \(command) changes data and asks first; not on a terminal, so pass --yes to confirm"], "\(run)")
                #expect(run.stdout.isEmpty, "\(run)")
            }
            #expect(try await fixture.status(of: "s1") == "scheduled")
            #expect(try await fixture.count("SELECT 1 FROM stream_reminders WHERE stream_id = 's1' AND status = 'active'") == 2)
            #expect(try await fixture.queue.stats().dead == 1)
        }
    }

    @Test func usageErrorsComeBeforeTheQuestion() async throws {
        try await AdminFixture.with { fixture in
            let run = try await fixture.admin("set-status", "s1", "done")
            #expect(run.status == 2, "\(run)")
            #expect(run.errorLines.first?.contains("status must be ready, started or expired") == true, "\(run)")
        }
    }

    /// Runs `countdown-admin arguments` on a pseudo-terminal whose keyboard types `answer`.
    static func onTerminal(_ fixture: AdminFixture, _ arguments: [String], answer: String) async throws -> AdminRun {
        let admin = TestEnvironment.productsDirectory.appendingPathComponent("countdown-admin").path
        let command = ([admin] + arguments).map { "'\($0)'" }.joined(separator: " ")
        return try await AdminRun.launch(["-qec", command, "/dev/null"], environment: fixture.environment, program: "/usr/bin/script",
                                         input: answer)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
    func onATerminalTheyAskAndOnlyYesGoesAhead() async throws {
        try await AdminFixture.with { fixture in
            try await StreamStatusCommandTests.arrangeBusyStream(fixture, "s1")
            let declined = try await Self.onTerminal(fixture, ["cancel", "s1"], answer: "n\n")
            #expect(declined.status == 0, "\(declined)")
            #expect(declined.stdout.contains("Cancel stream s1? Its Live Activities end and its reminders are cancelled. [y/N]"), "\(declined)")
            #expect(declined.stdout.contains("nothing changed"), "\(declined)")
            #expect(try await fixture.status(of: "s1") == "scheduled")

            let accepted = try await Self.onTerminal(fixture, ["cancel", "s1"], answer: "y\n")
            #expect(accepted.status == 0, "\(accepted)")
            #expect(accepted.stdout.contains("stream s1: scheduled → cancelled"), "\(accepted)")
            #expect(try await fixture.status(of: "s1") == "cancelled")
        }
    }
}
