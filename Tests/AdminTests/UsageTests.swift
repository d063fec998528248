import Foundation
import Testing

/// Help and usage errors of the command as a whole; none of them needs a database.
@Suite struct UsageTests {
    static let commands = ["migrate", "cancel", "set-status", "reschedule", "show", "stats", "dead", "reconcile", "seed-demo"]
    static let noServices: [String: String?] = ["DATABASE_URL": nil, "REDIS_URL": nil]

    @Test(arguments: commands)
    func helpExitsZeroWithTheCommandsUsage(_ command: String) async throws {
        try await AdminFixture.with(migrated: false) { fixture in
            for flag in ["--help", "-h"] {
                let run = try await fixture.admin([command, flag], environment: Self.noServices)
                #expect(run.status == 0, "\(run)")
                #expect(run.stdout.hasPrefix("usage: countdown-admin \(command)"), "\(run)")
                #expect(run.stderr.isEmpty)
            }
        }
    }

    @Test func helpWinsOverOtherArguments() async throws {
        try await AdminFixture.with(migrated: false) { fixture in
            for arguments in [["cancel", "s1", "--help"], ["dead", "retry", "--help"], ["reschedule", "--json", "--help"]] {
                let run = try await fixture.admin(arguments, environment: Self.noServices)
                #expect(run.status == 0, "\(run)")
                #expect(run.stdout.hasPrefix("usage: countdown-admin \(arguments[0])"), "\(run)")
            }
        }
    }

    @Test func topLevelHelpListsEveryCommand() async throws {
        try await AdminFixture.with(migrated: false) { fixture in
            for flag in ["--help", "-h", "help"] {
                let run = try await fixture.admin([flag], environment: Self.noServices)
                #expect(run.status == 0, "\(run)")
                #expect(run.stdout.hasPrefix("usage: countdown-admin <command>"))
                for command in Self.commands { #expect(run.stdout.contains("\n  \(command) "), "\(command) is listed") }
                #expect(run.stdout.contains("exit codes: 0 success, 1 runtime failure, 2 usage error"))
                let confirmed = try #require(run.stdout.split(separator: "\n").first { $0.contains("ask on a terminal") })
                for command in ["cancel", "set-status", "reschedule", "pause", "dead drop", "tokens restore", "quarantine drop"] {
                    #expect(confirmed.contains(command), "\(command) is listed as confirmed: \(confirmed)")
                }
            }
        }
    }

    @Test func noCommandOrAnUnknownOneIsAUsageErrorOnStderr() async throws {
        try await AdminFixture.with(migrated: false) { fixture in
            let none = try await fixture.admin([], environment: Self.noServices)
            #expect(none.status == 2, "\(none)")
            #expect(none.stdout.isEmpty)
            #expect(none.stderr.contains("usage: countdown-admin <command>"))

            let unknown = try await fixture.admin(["vacuum"], environment: Self.noServices)
            #expect(unknown.status == 2, "\(unknown)")
            #expect(unknown.errorLines.first == "countdown-admin: unknown command \"vacuum\"")
            #expect(unknown.stderr.contains("usage: countdown-admin <command>"))
            #expect(unknown.stdout.isEmpty)
        }
    }

    @Test func missingConfigurationIsReportedAllAtOnce() async throws {
        try await AdminFixture.with(migrated: false) { fixture in
            let run = try await fixture.admin(["stats"], environment: ["DATABASE_URL": nil, "REDIS_URL": nil, "START_LEAD_SECONDS": "0"])
            #expect(run.status == 2, "\(run)")
            #expect(run.errorLines.count == 3, "\(run)")
            #expect(run.errorLines.contains("countdown-admin: DATABASE_URL: is required but not set"))
            #expect(run.errorLines.contains("countdown-admin: REDIS_URL: is required but not set"))
            #expect(run.errorLines.contains { $0.hasPrefix("countdown-admin: START_LEAD_SECONDS: must be between 1 and 86400") })
        }
    }
}
