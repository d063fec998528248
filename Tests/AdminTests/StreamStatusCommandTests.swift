@testable import CountdownAdmin
@testable import CountdownCommands
import CountdownDomain
import CountdownStore
@testable import CountdownMaintenance
import Foundation
import Testing

/// `cancel` and `set-status`: a scheduled stream ends, a terminal one is left alone.
@Suite struct StreamStatusCommandTests {
    static let reportKeys: Set<String> = [
        "streamID", "previousStatus", "status", "changed", "remindersCancelled", "sessionsToEnd", "jobsRemoved",
    ]

    /// A stream inside its start window with two active reminders, one sent one, a running activity and its
    /// pre-start jobs queued.
    static func arrangeBusyStream(_ fixture: AdminFixture, _ id: String) async throws {
        try await fixture.stream(id, startsIn: 1800, people: ["selin", "mert", "ayse"])
        try await fixture.reminder(id, user: "mert")
        try await fixture.reminder(id, user: "ayse")
        try await fixture.reminder(id, user: "selin", status: "sent")
        try await fixture.session(id, user: "mert")
        try await fixture.queuePreStartJobs(id)
    }

    static func preStartJobIDs(_ stream: String) -> [String] {
        [CountdownJob.start(stream: stream).id, CountdownJob.reminder(stream: stream).id, CountdownJob.expire(stream: stream).id]
    }

    @Test func cancelEndsAScheduledStreamAndCountsWhatItDid() async throws {
        try await AdminFixture.with { fixture in
            try await Self.arrangeBusyStream(fixture, "s1")
            let run = try await fixture.admin("cancel", "s1", "--yes", "--json")
            #expect(run.status == 0, "\(run)")
            #expect(Set(try run.jsonObject().keys) == Self.reportKeys)
            #expect(try run.json(StreamCommands.Report.self) == StreamCommands.Report(
                streamID: "s1", previousStatus: "scheduled", status: "cancelled", changed: true,
                remindersCancelled: 2, sessionsToEnd: 1, jobsRemoved: 3, plannedStartAt: nil))

            #expect(try await fixture.status(of: "s1") == "cancelled")
            let reminders = try await fixture.query("SELECT user_id, status FROM stream_reminders WHERE stream_id = 's1' ORDER BY user_id")
            #expect(try reminders.map { "\(try $0.decode("user_id", as: String.self))=\(try $0.decode("status", as: String.self))" }
                    == ["ayse=cancelled", "mert=cancelled", "selin=sent"])
            let jobs = try await fixture.jobs(Self.preStartJobIDs("s1") + [CountdownJob.end(stream: "s1").id])
            #expect(Array(jobs.keys) == [CountdownJob.end(stream: "s1").id], "only the end job is left")
        }
    }

    @Test func cancelPrintsTheChangeForPeople() async throws {
        try await AdminFixture.with { fixture in
            try await Self.arrangeBusyStream(fixture, "s2")
            let run = try await fixture.admin("cancel", "s2", "--yes")
            #expect(run.status == 0, "\(run)")
            #expect(run.stdout.contains("stream s2: scheduled → cancelled"))
            #expect(run.stdout.contains("pre-start jobs removed:  3"))
            #expect(run.stdout.contains("reminders cancelled:     2"))
            #expect(run.stdout.contains("sessions to end:         1 (end pushes queued with reason cancelled)"))
            #expect(run.stderr.isEmpty)
        }
    }

    @Test func cancellingATerminalStreamChangesNothing() async throws {
        try await AdminFixture.with { fixture in
            try await Self.arrangeBusyStream(fixture, "s3")
            #expect(try await fixture.admin("cancel", "s3", "--yes").status == 0)
            let outbox = try await fixture.count("SELECT 1 FROM countdown_outbox")
            let updated: Date = try await fixture.query("SELECT updated_at FROM streams WHERE id = 's3'")[0].decode("updated_at")

            let text = try await fixture.admin("cancel", "s3", "--yes")
            #expect(text.status == 0, "\(text)")
            #expect(text.stdout == "stream s3 is already cancelled; nothing changed (1 session(s) still waiting for their end push)\n")
            let json = try await fixture.admin("cancel", "s3", "--json", "--yes")
            #expect(try json.json(StreamCommands.Report.self) == StreamCommands.Report(
                streamID: "s3", previousStatus: "cancelled", status: "cancelled", changed: false,
                remindersCancelled: 0, sessionsToEnd: 1, jobsRemoved: 0, plannedStartAt: nil))

            #expect(try await fixture.count("SELECT 1 FROM countdown_outbox") == outbox, "no new change recorded")
            #expect(try await fixture.query("SELECT updated_at FROM streams WHERE id = 's3'")[0].decode("updated_at", as: Date.self) == updated)
        }
    }

    @Test(arguments: ["ready", "started", "expired"])
    func setStatusEndsTheStreamWithThatReason(_ status: String) async throws {
        try await AdminFixture.with { fixture in
            try await Self.arrangeBusyStream(fixture, "s4")
            let run = try await fixture.admin("set-status", "s4", status, "--json", "--yes")
            #expect(run.status == 0, "\(run)")
            #expect(Set(try run.jsonObject().keys) == Self.reportKeys)
            #expect(try run.json(StreamCommands.Report.self) == StreamCommands.Report(
                streamID: "s4", previousStatus: "scheduled", status: status, changed: true,
                remindersCancelled: 0, sessionsToEnd: 1, jobsRemoved: 3, plannedStartAt: nil))
            #expect(try await fixture.status(of: "s4") == status)
            #expect(try await fixture.count("SELECT 1 FROM stream_reminders WHERE stream_id = 's4' AND status = 'active'") == 2,
                    "only cancel cancels reminders")
            let jobs = try await fixture.jobs(Self.preStartJobIDs("s4") + [CountdownJob.end(stream: "s4").id])
            #expect(Array(jobs.keys) == [CountdownJob.end(stream: "s4").id])

            let again = try await fixture.admin("set-status", "s4", "expired", "--yes")
            #expect(again.status == 0, "\(again)")
            #expect(again.stdout.hasPrefix("stream s4 is already \(status); nothing changed"))
            #expect(try await fixture.status(of: "s4") == status)
        }
    }

    @Test func setStatusRejectsCancelledWithAHintAndOtherStatuses() async throws {
        try await AdminFixture.with { fixture in
            try await fixture.stream("s5", startsIn: 7200, people: ["selin"])
            let cancelled = try await fixture.admin("set-status", "s5", "cancelled")
            #expect(cancelled.status == 2, "\(cancelled)")
            #expect(cancelled.stderr.contains("(use cancel to cancel)"))
            #expect(cancelled.stderr.contains("usage: countdown-admin set-status"))
            for bad in ["scheduled", "READY", "done", ""] {
                let run = try await fixture.admin("set-status", "s5", bad)
                #expect(run.status == 2, "\(run)")
                #expect(run.errorLines.first == "countdown-admin: status must be ready, started or expired (use cancel to cancel), got \"\(bad)\"")
            }
            #expect(try await fixture.status(of: "s5") == "scheduled")
        }
    }

    @Test func unknownStreamsFailWithOneLine() async throws {
        try await AdminFixture.with { fixture in
            for arguments in [["cancel", "nope", "--yes"], ["cancel", "nope", "--json", "--yes"], ["set-status", "nope", "ready", "--yes"]] {
                let run = try await fixture.admin(arguments)
                #expect(run.status == 1, "\(run)")
                #expect(run.errorLines == ["countdown-admin: stream nope does not exist"])
                #expect(run.stdout.isEmpty)
            }
        }
    }

    @Test func badArgumentsAreUsageErrors() async throws {
        try await AdminFixture.with { fixture in
            let cases: [([String], String)] = [
                (["cancel"], "missing <streamId>"),
                (["cancel", "a", "b"], "unexpected argument \"b\""),
                (["cancel", "a", "--force"], "unknown option --force"),
                (["cancel", "a", "--json=yes"], "--json takes no value"),
                (["cancel", ""], "stream id must be 1-200 printable characters"),
                (["set-status", "a"], "missing <status>"),
                (["set-status", "a", "ready", "now"], "unexpected argument \"now\""),
            ]
            for (arguments, message) in cases {
                try await fixture.expectUsageError(arguments, message, usage: "usage: countdown-admin \(arguments[0])")
            }
        }
    }
}
