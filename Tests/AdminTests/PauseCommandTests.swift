import CountdownDomain
import DelayQueue
import Foundation
import Testing

/// `countdown-admin pause|resume` and what `stats` shows of it.
@Suite struct PauseCommandTests {
    @Test func pauseHoldsAKindFleetWideAndResumeReleasesIt() async throws {
        try await AdminFixture.with { fixture in
            try await fixture.queue.enqueue([
                NewJob(id: "start:s1", kind: "start", payload: [], due: .now), NewJob(id: "end:s2", kind: "end", payload: [], due: .now),
            ])
            let paused = try await fixture.admin("pause", "--kind", "start", "--reason", "wrong FCM project", "--yes")
            #expect(paused.status == 0, "\(paused)")
            #expect(try await fixture.queue.pausedKinds().map(\.kind) == ["start"])
            #expect(try await fixture.queue.claim(max: 10, lease: .seconds(30)).jobs.map(\.id) == ["end:s2"])
            let stats = try await fixture.admin("stats")
            #expect(stats.stdout.contains("paused:   start since"), "\(stats)")
            #expect(stats.stdout.contains("wrong FCM project"), "\(stats)")
            #expect(stats.stdout.contains("1 due job(s) held"), "\(stats)")
            let resumed = try await fixture.admin("resume", "--kind", "start")
            #expect(resumed.status == 0, "\(resumed)")
            #expect(try await fixture.queue.pausedKinds().isEmpty)
            #expect(try await fixture.queue.claim(max: 10, lease: .seconds(30)).jobs.map(\.id) == ["start:s1"])
        }
    }

    /// `--actor NAME` names who paused and resumed in `countdown_pause`, as it does in the audit.
    @Test func theActorNamedIsRecorded() async throws {
        try await AdminFixture.with { fixture in
            #expect(try await fixture.admin("pause", "--kind", "reminder", "--actor", "on-call ayse", "--yes").status == 0)
            var actor: String = try await fixture.query("SELECT actor FROM countdown_pause WHERE kind = 'reminder'")[0].decode("actor")
            #expect(actor == "countdown-admin (on-call ayse)")
            #expect(try await fixture.admin("resume", "--kind", "reminder", "--actor=deniz").status == 0)
            actor = try await fixture.query("SELECT actor FROM countdown_pause WHERE kind = 'reminder'")[0].decode("actor")
            #expect(actor == "countdown-admin (deniz)")
        }
    }

    /// SPEC 10.3: `pause --kind start`, Redis loses its data, `reconcile`: the start job is rebuilt and held, nothing
    /// is claimable; PostgreSQL says who paused, why and since when; `resume` (recorded there too) releases it.
    @Test func aPauseSurvivesRedisLosingItsDataAndAReconcile() async throws {
        try await AdminFixture.with { fixture in
            try await fixture.stream("s1", startsIn: 1800, people: ["alice"])
            let paused = try await fixture.admin("pause", "--kind", "start", "--reason", "incident 42", "--yes")
            #expect(paused.status == 0, "\(paused)")
            let row = try #require(try await fixture.query("SELECT paused, actor, reason FROM countdown_pause WHERE kind = 'start'").first)
            #expect(try row.decode("paused", as: Bool.self) && row.decode("reason", as: String.self) == "incident 42")
            #expect(try row.decode("actor", as: String.self).hasPrefix("countdown-admin"))
            try await fixture.loseRedisData()
            #expect(try await fixture.queue.pausedKinds().isEmpty)
            let reconciled = try await fixture.admin("reconcile")
            #expect(reconciled.status == 0, "\(reconciled)")
            #expect(try await fixture.queue.pausedKinds().map(\.kind) == ["start"])
            #expect(try await fixture.jobs(["start:s1"])["start:s1"] != nil, "the start job is rebuilt")
            #expect(try await fixture.queue.claim(max: 10, lease: .seconds(30)).jobs.isEmpty, "and held")
            let stats = try await fixture.admin("stats")
            #expect(stats.stdout.contains("paused:   start since") && stats.stdout.contains("by countdown-admin"), "\(stats)")
            #expect(stats.stdout.contains("incident 42"), "\(stats)")
            let resumed = try await fixture.admin("resume")
            #expect(resumed.status == 0, "\(resumed)")
            #expect(try await fixture.count("SELECT kind FROM countdown_pause WHERE paused") == 0)
            #expect(try await fixture.queue.claim(max: 10, lease: .seconds(30)).jobs.map(\.id) == ["start:s1"])
        }
    }

    @Test func pauseWithoutKindPausesEveryKind() async throws {
        try await AdminFixture.with { fixture in
            let pause = try await fixture.admin("pause", "--yes")
            #expect(pause.status == 0, "\(pause)")
            let paused = try await fixture.queue.pausedKinds()
            #expect(paused.count == CountdownJob.Kind.allCases.count)
            let resume = try await fixture.admin("resume")
            #expect(resume.status == 0, "\(resume)")
            let left = try await fixture.queue.pausedKinds()
            #expect(left.isEmpty)
        }
    }

    @Test func pauseOffATerminalNeedsYes() async throws {
        try await AdminFixture.with { fixture in
            for arguments in [["pause"], ["pause", "--kind", "start"]] {
                let run = try await fixture.admin(arguments)
                #expect(run.status == 2, "\(run)")
                #expect(run.errorLines == ["countdown-admin: pause changes data and asks first; not on a terminal, so pass --yes to confirm"], "\(run)")
            }
            #expect(try await fixture.queue.pausedKinds().isEmpty, "nothing paused")
        }
    }

    @Test func anUnknownKindIsAUsageError() async throws {
        try await AdminFixture.with { fixture in
            try await fixture.expectUsageError(["pause", "--kind", "starts"],
                                               "--kind must be one of start, reminder, expire, end, update, reminder_page, session_end, backfill_device, backfill_user, got \"starts\"",
                                               usage: "usage: countdown-admin pause")
        }
    }
}
