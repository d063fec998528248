import CountdownDomain
import CountdownStore
@testable import CountdownMaintenance
import Foundation
import Testing

/// A reschedule records that running activities need an update push; the reconciler re-adds the `update` job
/// (lost with Redis) until the push went out.
@Suite struct ReconcileUpdateTests {
    @Test func aLostUpdateJobIsRebuiltUntilItsPushWentOut() async throws {
        try await AdminFixture.with { fixture in
            try await fixture.stream("ru1", startsIn: 1800, people: ["selin"])
            try await fixture.session("ru1", user: "selin")
            try await fixture.stream("ru2", startsIn: 1800, people: ["selin"])
            try await fixture.session("ru2", user: "selin")
            try await fixture.execute("UPDATE streams SET planned_start_at = planned_start_at + interval '10 minutes' WHERE id = 'ru1'")

            let run = try await fixture.admin("reconcile", "--json")
            #expect(run.status == 0, "\(run)")
            #expect(try run.json(Reconciler.Report.self).added["update"] == 1, "only the rescheduled stream needs an update")
            let update = CountdownJob.update(stream: "ru1").id
            #expect(try await fixture.jobs([update, CountdownJob.update(stream: "ru2").id]).keys.sorted() == [update])

            // An update for an older planned start clears nothing; the one for the current start does.
            let planned = try await fixture.plannedStart(of: "ru1")
            try await fixture.db.withConnection { try ProgressQueries.markUpdateDone("ru1", planned: planned.addingTimeInterval(-600), on: $0) }
            #expect(try await fixture.admin("reconcile", "--json", "--dry-run").json(Reconciler.Report.self).added["update"] == nil,
                    "the job is still there")
            try await fixture.queue.cancel([update])
            #expect(try await fixture.admin("reconcile", "--json", "--dry-run").json(Reconciler.Report.self).added["update"] == 1)
            try await fixture.db.withConnection { try ProgressQueries.markUpdateDone("ru1", planned: planned, on: $0) }
            let again = try await fixture.admin("reconcile", "--json")
            #expect(try again.json(Reconciler.Report.self).added["update"] == nil)
        }
    }
}
