import BlockingIO
import CountdownDomain
@testable import CountdownFlows
import CountdownStore
import Foundation
import Postgres
import Testing

/// SPEC 10.1, newest state only: whatever overlaps an update fan-out (a reschedule while it sends, another run of the
/// stream's job, a push-to-start whose answer is not yet recorded), the last update each session accepts carries the
/// current planned start.
@Suite struct SessionUpdateOrderTests {
    static func planned(_ db: PostgresClient) async throws -> String {
        String(try await db.query("SELECT floor(extract(epoch FROM planned_start_at))::bigint AS p FROM streams WHERE id = 's'")[0]
            .decode("p", as: Int.self))
    }

    @Test func aStartMovedWhileAnUpdateIsOutIsSentInAnotherRound() async throws {
        try await SessionUpdateTests.with { handler, db, gateway in
            try await SessionUpdateTests.reschedule(db, by: 20)
            gateway.duringFirstSend.withLock { $0 = { try await SessionUpdateTests.reschedule(db, by: 10) } }
            guard case .done = try await handler.handle(.update(stream: "s")) else { Issue.record("expected done"); return }
            let current = try await Self.planned(db)
            #expect(gateway.lastExpiration == ["r-d1": current, "r-d2": current, "r-d3": current, "r-d4": current],
                    "every session's last update carries the start current after the job")
            #expect(gateway.sent.value.count == 8, "two rounds of four")
        }
    }

    @Test func anotherRunOfTheStreamsUpdateFanOutIsWaitedFor() async throws {
        try await SessionUpdateTests.with { handler, db, gateway in
            try await SessionUpdateTests.reschedule(db, by: 20)
            let held = try await db.withConnection {
                try ProgressQueries.claimUpdate("s", claim: "other-run", seconds: 30, owner: "w-other", deadOwners: [], on: $0)
            }
            #expect(held == .claimed)
            #expect(try await handler.handle(.update(stream: "s")) == .reschedule(after: SessionFanout.updateRecheck, reason: "update_running_elsewhere"))
            #expect(gateway.sent.value.isEmpty, "nothing sent while another run holds the stream")
            _ = try await db.withConnection { try ProgressQueries.releaseUpdate("s", claim: "other-run", on: $0) }
            guard case .done = try await handler.handle(.update(stream: "s")) else { Issue.record("expected done"); return }
            #expect(gateway.sent.value.count == 4)
            let claim = try await db.query("SELECT update_claim FROM countdown_stream_progress WHERE stream_id = 's'")[0].decode("update_claim", as: String?.self)
            #expect(claim == nil, "the job lets go of its claim")
        }
    }

    @Test func aRunThatOutlastsItsClaimTermKeepsTheClaimAndIsNotRepeatedAlongside() async throws {
        try await SessionUpdateTests.with(claimSeconds: 1) { handler, db, gateway in
            try await SessionUpdateTests.reschedule(db, by: 20)
            // The gateway answers the first batch only after twice the claim's term; meanwhile the stream's job runs
            // again (queued once more by the relay or the reconciler).
            let second = Locked<HandlerOutcome?>(nil)
            gateway.duringFirstSend.withLock {
                $0 = {
                    try await Task.sleep(for: .seconds(2))
                    let outcome = try await handler.handle(.update(stream: "s"))
                    second.withLock { $0 = outcome }
                }
            }
            guard case .done = try await handler.handle(.update(stream: "s")) else { Issue.record("expected done"); return }
            #expect(second.value == .reschedule(after: SessionFanout.updateRecheck, reason: "update_running_elsewhere"),
                    "the run still out keeps the stream")
            #expect(gateway.sent.value.count == 4, "each session updated once (got \(gateway.sent.value.map(\.token)))")
        }
    }

    /// A run whose claim another run took over (it outlasted the claim while PostgreSQL was away, say) starts no
    /// other round: what it sent stays recorded, and the run holding the claim sends the rest.
    @Test func aRunThatLostItsClaimStopsAfterItsRound() async throws {
        try await SessionUpdateTests.with(claimSeconds: 1) { handler, db, gateway in
            try await SessionUpdateTests.reschedule(db, by: 20)
            gateway.duringFirstSend.withLock {
                $0 = {
                    try await SessionUpdateTests.reschedule(db, by: 10)
                    _ = try await db.withConnection {
                        try $0.execute("""
                            UPDATE countdown_stream_progress SET update_claim = 'other-run', update_claimed_by = 'w-other',
                                update_claimed_until = now() + interval '30 seconds' WHERE stream_id = 's'
                            """)
                    }
                    // The keeper looks every 250 ms.
                    try await Task.sleep(for: .milliseconds(1500))
                }
            }
            #expect(try await handler.handle(.update(stream: "s")) == .skipped(reason: "update_claim_lost"))
            #expect(gateway.sent.value.count == 4, "one round of four, not a second beside the other run's")
            let recorded = try await db.query("SELECT DISTINCT device_id FROM countdown_session_deliveries WHERE stream_id = 's' ORDER BY 1")
                .map { try $0.decode("device_id", as: String.self) }
            #expect(recorded == ["d1", "d2", "d3", "d4"], "what it sent stays recorded")
        }
    }

    @Test func aSessionWhosePushToStartIsInFlightWaitsForItsAnswer() async throws {
        try await SessionUpdateTests.with { handler, db, gateway in
            // d5's push-to-start is out (claimed, not yet settled) when its runtime session registers.
            _ = try await db.withConnection { connection in
                try connection.execute("""
                    UPDATE countdown_start_ledger SET status = 'sending', sent_at = NULL, claimed_until = now() + interval '30 seconds'
                    WHERE device_id = 'd5'
                    """)
                try connection.execute("INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token) VALUES ('s', 'd5', 'u2', 'r-d5')")
            }
            #expect(try await handler.handle(.update(stream: "s")) == .reschedule(after: SessionFanout.updateRecheck, reason: "start_in_flight"))
            #expect(gateway.sent.value.isEmpty, "what d5's start carried is not known yet; the others show the current start")
            // Its answer is recorded, and nothing moved since: it shows the current start.
            _ = try await db.withConnection { try $0.execute("UPDATE countdown_start_ledger SET status = 'sent', sent_at = now() WHERE device_id = 'd5'") }
            #expect(try await handler.handle(.update(stream: "s")) == .done(detail: "all 5 sessions show the current start"))
            #expect(gateway.sent.value.isEmpty)
        }
    }

    @Test func aSessionWhosePushToStartWasLeftSendingByADeadWorkerIsUpdated() async throws {
        try await SessionUpdateTests.with { handler, db, gateway in
            // d5's push-to-start went out from a worker killed before recording the answer: its row stays `sending`,
            // the claim expired. The app registered the activity it opened; the stream has moved since.
            try await SessionUpdateTests.reschedule(db, by: 20)
            _ = try await db.withConnection { connection in
                try connection.execute("""
                    UPDATE countdown_start_ledger SET status = 'sending', sent_at = NULL, claimed_by = 'w-dead',
                        claimed_until = now() - interval '1 second'
                    WHERE device_id = 'd5'
                    """)
                try connection.execute("INSERT INTO live_activity_sessions (stream_id, device_id, user_id, live_activity_token) VALUES ('s', 'd5', 'u2', 'r-d5')")
            }
            guard case .done = try await handler.handle(.update(stream: "s")) else { Issue.record("expected done, not a wait for the dead worker's start"); return }
            let current = try await Self.planned(db)
            #expect(gateway.lastExpiration["r-d5"] == current, "d5's activity shows the current start")
        }
    }
}
