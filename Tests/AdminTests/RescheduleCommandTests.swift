@testable import CountdownAdmin
@testable import CountdownCommands
import CountdownDomain
import CountdownStore
@testable import CountdownMaintenance
import Foundation
import Testing

@Suite struct RescheduleCommandTests {
    /// `date` as ISO-8601 in a +03:00 zone, whole seconds.
    static func istanbul(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(secondsFromGMT: 3 * 3600)
        return formatter.string(from: date)
    }

    static func wholeSeconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
    }

    @Test func aFutureTimeWithAZoneMovesThePlannedStart() async throws {
        try await AdminFixture.with { fixture in
            try await fixture.stream("r1", startsIn: 7200, people: ["selin", "mert"])
            let target = Self.wholeSeconds(Date().addingTimeInterval(2 * 86_400))
            let text = Self.istanbul(target)
            #expect(text.hasSuffix("+03:00"))

            let run = try await fixture.admin("reschedule", "r1", text, "--json", "--yes")
            #expect(run.status == 0, "\(run)")
            #expect(Set(try run.jsonObject().keys) == StreamStatusCommandTests.reportKeys.union(["plannedStartAt"]))
            #expect(try run.json(StreamCommands.Report.self) == StreamCommands.Report(
                streamID: "r1", previousStatus: "scheduled", status: "scheduled", changed: true,
                remindersCancelled: 0, sessionsToEnd: 0, jobsRemoved: 0, plannedStartAt: target))
            #expect(try await fixture.plannedStart(of: "r1") == target)
            #expect(try await fixture.count("SELECT 1 FROM countdown_outbox WHERE stream_id = 'r1' AND rescheduled") == 1,
                    "the relay learns of the move")
            #expect(try await fixture.status(of: "r1") == "scheduled")
        }
    }

    @Test func textOutputNamesTheNewTimeInUTC() async throws {
        try await AdminFixture.with { fixture in
            try await fixture.stream("r2", startsIn: 7200, people: ["selin"])
            let target = Self.wholeSeconds(Date().addingTimeInterval(86_400))
            let run = try await fixture.admin("reschedule", "r2", Self.istanbul(target), "--yes")
            #expect(run.status == 0, "\(run)")
            #expect(run.stdout.hasPrefix("stream r2 now starts at \(TimeArgument.format(target));"))
            #expect(TimeArgument.format(target).hasSuffix("Z"))
        }
    }

    @Test func fractionalSecondsAndUTCAreAccepted() async throws {
        try await AdminFixture.with { fixture in
            try await fixture.stream("r3", startsIn: 7200, people: ["selin"])
            let whole = Self.wholeSeconds(Date().addingTimeInterval(86_400))
            let text = TimeArgument.format(whole).replacingOccurrences(of: "Z", with: ".250Z")
            let run = try await fixture.admin("reschedule", "r3", text, "--yes")
            #expect(run.status == 0, "\(run)")
            let planned = try await fixture.plannedStart(of: "r3")
            #expect(abs(planned.timeIntervalSince(whole) - 0.25) < 0.001)
        }
    }

    @Test func aPastTimeFailsNamingTheDatabaseTime() async throws {
        try await AdminFixture.with { fixture in
            try await fixture.stream("r4", startsIn: 7200, people: ["selin"])
            let before = try await fixture.plannedStart(of: "r4")
            let past = Self.istanbul(Date().addingTimeInterval(-60))
            let run = try await fixture.admin("reschedule", "r4", past, "--yes")
            #expect(run.status == 1, "\(run)")
            #expect(run.errorLines.count == 1)
            let line = try #require(run.errorLines.first)
            #expect(line.hasPrefix("countdown-admin: "))
            #expect(line.contains("is not in the future (database time is "))
            #expect(try await fixture.plannedStart(of: "r4") == before)
        }
    }

    static let notATime = "is not an ISO-8601 time with a zone, e.g. 2026-12-01T20:00:00+03:00"

    /// Times without a zone or that do not parse, and days that do not exist (never rolled over to the next month).
    @Test(arguments: [("2030-01-01T10:00:00", notATime), ("tomorrow", notATime), ("2030-01-01", notATime), ("1767261600", notATime),
                      ("2030-13-01T10:00:00Z", "is not a real time: its month is out of range"),
                      ("2027-02-30T10:00:00Z", "is not a real time: its day is out of range")])
    func timesWithoutAZoneUnparseableOrImpossibleAreUsageErrors(_ time: String, _ problem: String) async throws {
        try await AdminFixture.with { fixture in
            try await fixture.stream("r5", startsIn: 7200, people: ["selin"])
            let before = try await fixture.plannedStart(of: "r5")
            let run = try await fixture.admin("reschedule", "r5", time, "--yes")
            #expect(run.status == 2, "\(run)")
            #expect(run.errorLines.first == "countdown-admin: \"\(time)\" \(problem)")
            #expect(run.stderr.contains("usage: countdown-admin reschedule"))
            #expect(try await fixture.plannedStart(of: "r5") == before)
        }
    }

    @Test func onlyScheduledStreamsMove() async throws {
        try await AdminFixture.with { fixture in
            try await fixture.stream("r6", startsIn: 7200, people: ["selin"])
            try await fixture.execute("UPDATE streams SET status = 'started' WHERE id = 'r6'")
            let before = try await fixture.plannedStart(of: "r6")
            let run = try await fixture.admin("reschedule", "r6", Self.istanbul(Date().addingTimeInterval(86_400)), "--yes")
            #expect(run.status == 1, "\(run)")
            #expect(run.errorLines == ["countdown-admin: stream r6 is started; only scheduled streams can be rescheduled"])
            #expect(try await fixture.plannedStart(of: "r6") == before)
        }
    }

    @Test func unknownStreamAndMissingArguments() async throws {
        try await AdminFixture.with { fixture in
            let unknown = try await fixture.admin("reschedule", "nope", Self.istanbul(Date().addingTimeInterval(86_400)), "--yes")
            #expect(unknown.status == 1, "\(unknown)")
            #expect(unknown.errorLines == ["countdown-admin: stream nope does not exist"])

            let missing = try await fixture.admin("reschedule", "r7")
            #expect(missing.status == 2, "\(missing)")
            #expect(missing.errorLines.first == "countdown-admin: missing <time>")
        }
    }

    @Test func trailingGarbageOrNoConfirmationChangesNothing() async throws {
        try await AdminFixture.with { fixture in
            try await fixture.stream("r8", startsIn: 7200, people: ["selin"])
            let before = try await fixture.plannedStart(of: "r8")
            let time = Self.istanbul(Date().addingTimeInterval(86_400))
            for text in [time + "garbage", time + " ", time + "Z", "2027-01-01T20:00:00", "2027-01-01 20:00:00+03:00"] {
                let run = try await fixture.admin("reschedule", "r8", text, "--yes")
                #expect(run.status == 2, "\(text): \(run)")
                #expect(run.errorLines.first?.contains("is not an ISO-8601 time with a zone") == true, "\(run)")
            }
            let unconfirmed = try await fixture.admin("reschedule", "r8", time)
            #expect(unconfirmed.status == 2, "\(unconfirmed)")
            #expect(unconfirmed.errorLines.first?.contains("pass --yes") == true, "\(unconfirmed)")
            #expect(try await fixture.plannedStart(of: "r8") == before)
        }
    }

    @Test func theTimeShapeIsCheckedWhole() {
        for good in ["2027-01-01T20:00:00+03:00", "2027-01-01T20:00:00Z", "2027-01-01t20:00:00.123456z", "2027-01-01T20:00:00.5-05:30"] {
            #expect(TimeArgument.hasShape(good), "\(good)")
        }
        for bad in ["2027-01-01T20:00:00+03:00garbage", "2027-01-01T20:00:00+03:00 ", " 2027-01-01T20:00:00Z", "2027-01-01T20:00:00.Z",
                    "2027-01-01T20:00:00+0300", "2027-1-01T20:00:00Z", "2027-01-01T20:00:00"] {
            #expect(!TimeArgument.hasShape(bad), "\(bad)")
        }
    }
}
