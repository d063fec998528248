@testable import CountdownAdmin
import CountdownCommands
import CountdownDomain
import CountdownStore
@testable import CountdownMaintenance
import DelayQueue
import Foundation
import Testing

@Suite struct ReconcileCommandTests {
    static func job(_ job: CountdownJob, due: JobDue) -> NewJob {
        NewJob(id: job.id, kind: job.kind.rawValue, payload: job.payload, due: due)
    }

    /// rc1 has no jobs at all (start, reminder, expire missing); rc2 has its start job right and its expire job
    /// at the wrong time; rc3 was cancelled with a running activity and lacks its end job; rc4 was cancelled and
    /// still has a start job.
    static func arrange(_ fixture: AdminFixture) async throws -> (rc2Expire: Date, rc4Start: String) {
        try await fixture.stream("rc1", startsIn: 7200, people: ["selin", "mert"])
        try await fixture.reminder("rc1", user: "mert")
        try await fixture.stream("rc2", startsIn: 7200, people: ["selin"])
        let planned = try await fixture.plannedStart(of: "rc2")
        try await fixture.queue.enqueue([
            job(.start(stream: "rc2"), due: .at(planned.addingTimeInterval(-3600))),
            job(.expire(stream: "rc2"), due: .at(planned.addingTimeInterval(60))),
        ])
        try await fixture.stream("rc3", startsIn: 1800, people: ["selin", "mert"])
        try await fixture.session("rc3", user: "mert")
        try await fixture.execute("UPDATE streams SET status = 'cancelled' WHERE id = 'rc3'")
        try await fixture.stream("rc4", startsIn: 7200, people: ["selin"])
        try await fixture.execute("UPDATE streams SET status = 'cancelled' WHERE id = 'rc4'")
        try await fixture.queue.enqueue(job(.start(stream: "rc4"), due: .after(.seconds(3600))))
        return (planned.addingTimeInterval(3600), CountdownJob.start(stream: "rc4").id)
    }

    static let missing = [
        CountdownJob.start(stream: "rc1").id, CountdownJob.reminder(stream: "rc1").id, CountdownJob.expire(stream: "rc1").id,
        CountdownJob.end(stream: "rc3").id,
    ]

    static func expected(dryRun: Bool) -> Reconciler.Report {
        Reconciler.Report(streamsChecked: 3, added: ["start": 1, "reminder": 1, "expire": 1, "end": 1], corrected: ["expire": 1],
                          removed: ["start": 1], dryRun: dryRun)
    }

    @Test func dryRunReportsWithoutTouchingRedis() async throws {
        try await AdminFixture.with { fixture in
            let arranged = try await Self.arrange(fixture)
            let before = try await fixture.jobs(Self.missing + [CountdownJob.expire(stream: "rc2").id, arranged.rc4Start])
            let run = try await fixture.admin("reconcile", "--dry-run", "--json")
            #expect(run.status == 0, "\(run)")
            #expect(Set(try run.jsonObject().keys) == ["streamsChecked", "added", "corrected", "removed", "dryRun", "quarantined", "remindersLeftToPages"])
            #expect(try run.json(Reconciler.Report.self) == Self.expected(dryRun: true))
            #expect(run.stderr.isEmpty, "no progress lines with --json")
            #expect(try await fixture.jobs(Self.missing + [CountdownJob.expire(stream: "rc2").id, arranged.rc4Start]) == before)
            #expect(before.count == 2)

            let text = try await fixture.admin("reconcile", "--dry-run")
            #expect(text.status == 0, "\(text)")
            #expect(text.stdout.hasPrefix("checked 3 stream(s) (dry run: nothing changed)\n"))
            #expect(text.stdout.contains("jobs that would be added:     end=1 expire=1 reminder=1 start=1"))
            #expect(text.stdout.contains("due times that would be fixed: expire=1"))
            #expect(text.stdout.contains("stale jobs that would be removed: start=1"))
            #expect(text.stderr.hasSuffix("3/3 streams\n"), "progress goes to stderr")
        }
    }

    @Test func realRunRepairsTheQueueAndASecondFindsNothing() async throws {
        try await AdminFixture.with { fixture in
            let arranged = try await Self.arrange(fixture)
            let run = try await fixture.admin("reconcile", "--json")
            #expect(run.status == 0, "\(run)")
            #expect(try run.json(Reconciler.Report.self) == Self.expected(dryRun: false))

            let jobs = try await fixture.jobs(Self.missing + [CountdownJob.expire(stream: "rc2").id, arranged.rc4Start])
            #expect(Set(jobs.keys) == Set(Self.missing + [CountdownJob.expire(stream: "rc2").id]))
            guard case .waiting(let expireDue) = jobs[CountdownJob.expire(stream: "rc2").id]?.state else {
                Issue.record("rc2's expire job is not waiting")
                return
            }
            #expect(abs(expireDue.timeIntervalSince(arranged.rc2Expire)) < 1)
            guard case .waiting(let startDue) = jobs[CountdownJob.start(stream: "rc1").id]?.state else {
                Issue.record("rc1's start job is not waiting")
                return
            }
            #expect(abs(startDue.timeIntervalSince(try await fixture.plannedStart(of: "rc1").addingTimeInterval(-3600))) < 1)

            let again = try await fixture.admin("reconcile", "--json")
            #expect(try again.json(Reconciler.Report.self) == Reconciler.Report(streamsChecked: 3, dryRun: false))
            let text = try await fixture.admin("reconcile")
            #expect(text.stdout == """
                checked 3 stream(s)
                  jobs that were added:     none
                  due times that were fixed: none
                  stale jobs that were removed: none

                """)
        }
    }

    @Test func badArgumentsAreUsageErrors() async throws {
        try await AdminFixture.with { fixture in
            for (arguments, message) in [(["reconcile", "all"], "unexpected argument \"all\""), (["reconcile", "--dry-run=yes"], "--dry-run takes no value"),
                                         (["reconcile", "--fix"], "unknown option --fix")] {
                try await fixture.expectUsageError(arguments, message, usage: "usage: countdown-admin reconcile [--dry-run] [--json]")
            }
        }
    }
}
