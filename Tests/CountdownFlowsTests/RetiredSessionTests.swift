import CountdownDomain
@testable import CountdownFlows
import CountdownStore
import Foundation
import Postgres
import PushPayloads
import Testing

/// Sessions a device takeover retired get an end push that dismisses the activity at once, are deleted once it
/// was accepted or their token is dead, and are never dropped silently.
@Suite struct RetiredSessionTests {
    typealias Gateway = PushSafetyFlowTests.ScriptedGateway

    static func seed(_ db: PostgresClient, status: String = "scheduled") async throws {
        try await db.execute("INSERT INTO users (id, display_name, locale) VALUES ('old', 'Old', 'en'), ('new', 'New', 'tr')")
        try await db.execute("INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token) VALUES ('phone', 'new', 'ios', 'fcm-phone', 'pts')")
        try await db.execute("INSERT INTO streams (id, title, planned_start_at, status) VALUES ('s', 'S', now() + interval '30 minutes', $1)", [status])
        try await db.execute("INSERT INTO stream_participants (stream_id, user_id, role) VALUES ('s', 'old', 'creator')")
        try await db.execute("""
            INSERT INTO countdown_retired_sessions (stream_id, device_id, live_activity_token, user_id, reason) VALUES
              ('s', 'phone', 'run-1', 'old', 'takeover'), ('s', 'phone', 'run-2', 'old', 'takeover')
            """)
    }

    @Test func anAcceptedEndDismissesAtOnceAndDeletesTheRetiredSession() async throws {
        let gateway = Gateway(["run-2": .tokenRefused(.runtime, reason: "Unregistered")])
        try await PushSafetyFlowTests.with(gateway) { handler, db, _ in
            try await Self.seed(db)
            let outcome = try await handler.handle(.sessionEnd(stream: "s", device: "phone"))
            guard case .done(let detail) = outcome else { Issue.record("expected done, got \(outcome)"); return }
            #expect(detail.contains("ended 2 of 2 retired sessions"), "\(detail)")
            #expect(gateway.sent.value.sorted() == ["run-1", "run-2"])
            let payload = try #require(gateway.payloads.value.first)
            let aps = try #require(try JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any])["aps"] as? [String: Any]
            let state = try #require(aps?["content-state"] as? [String: Any])
            #expect(aps?["event"] as? String == "end")
            #expect(state["endedReason"] as? String == "cancelled", "a stream still scheduled ends as cancelled for the phone")
            #expect(state["role"] as? String == "creator", "the previous user's role")
            let timestamp = try #require(aps?["timestamp"] as? Int)
            #expect(aps?["dismissal-date"] as? Int == timestamp, "dismissed at once")
            #expect(try await PushSafetyFlowTests.count(db, "SELECT 1 FROM countdown_retired_sessions") == 0)
            // A second run (a repeated job) finds nothing to do and sends nothing.
            let again = try await handler.handle(.sessionEnd(stream: "s", device: "phone"))
            #expect(again == .skipped(reason: "stream_not_ended"))
            #expect(gateway.sent.value.count == 2)
        }
    }

    @Test func aStreamThatEndedMeanwhileGivesItsOwnReason() async throws {
        let gateway = Gateway([:])
        try await PushSafetyFlowTests.with(gateway) { handler, db, _ in
            try await Self.seed(db, status: "started")
            _ = try await handler.handle(.sessionEnd(stream: "s", device: "phone"))
            #expect(gateway.payloads.value.count == 2)
            #expect(gateway.payloads.value.allSatisfy { $0.contains(#""endedReason":"started""#) })
        }
    }

    @Test func failuresAreRetriedThenRecordedUndeliverable() async throws {
        let gateway = Gateway(["run-1": .retry(after: .seconds(5), reason: "UNAVAILABLE"), "run-2": .rejected(reason: "BadExpirationDate")])
        try await PushSafetyFlowTests.with(gateway) { handler, db, metrics in
            try await Self.seed(db)
            let first = try await handler.handle(.sessionEnd(stream: "s", device: "phone"))
            guard case .retryOnSchedule(let after, _) = first else { Issue.record("expected a retry, got \(first)"); return }
            #expect(after == EndRetrySchedule.firstMinuteInterval, "the Retry-After (5 s) and the first minute's interval")
            let rows = try await db.query("SELECT live_activity_token, attempts, last_reason, claimed_until FROM countdown_retired_sessions ORDER BY 1")
            #expect(try rows.map { "\(try $0.decode("live_activity_token", as: String.self))=\(try $0.decode("last_reason", as: String.self))/\(try $0.decode("attempts", as: Int.self))" }
                    == ["run-1=retry/1", "run-2=rejected/1"])
            #expect(try rows.allSatisfy { try $0.decode("claimed_until", as: Date?.self) == nil }, "claims released for the retry")
            try await db.execute("UPDATE countdown_retired_sessions SET first_failed_at = now() - interval '5 hours'")
            let last = try await handler.handle(.sessionEnd(stream: "s", device: "phone"))
            guard case .done = last else { Issue.record("expected done, got \(last)"); return }
            #expect(try await PushSafetyFlowTests.count(db, "SELECT 1 FROM countdown_retired_sessions") == 0)
            let undeliverable = try await db.query("SELECT live_activity_token, reason FROM countdown_undeliverable_ends ORDER BY 1")
                .map { "\(try $0.decode("live_activity_token", as: String.self))=\(try $0.decode("reason", as: String.self))" }
            #expect(undeliverable == ["run-1=takeover: retry", "run-2=takeover: rejected"])
            #expect(metrics.undeliverable.value == ["takeover: retry": 1, "takeover: rejected": 1])
        }
    }

    @Test func aSessionClaimedByAnotherSenderIsLeftToIt() async throws {
        let gateway = Gateway([:])
        try await PushSafetyFlowTests.with(gateway) { handler, db, _ in
            try await Self.seed(db)
            try await db.execute("UPDATE countdown_retired_sessions SET claimed_until = now() + interval '1 minute', claimed_by = 'other'")
            let outcome = try await handler.handle(.sessionEnd(stream: "s", device: "phone"))
            guard case .retry = outcome else { Issue.record("expected a retry, got \(outcome)"); return }
            #expect(gateway.sent.value.isEmpty)
        }
    }

    @Test func theTwoPartsOfASessionEndJobMergeIntoOneOutcome() {
        #expect(JobHandler.merged(retired: nil, live: .skipped(reason: "x")) == .skipped(reason: "x"))
        #expect(JobHandler.merged(retired: .done(detail: "a"), live: .skipped(reason: "stream_not_ended")) == .done(detail: "a"))
        #expect(JobHandler.merged(retired: .done(detail: "a"), live: .done(detail: "b")) == .done(detail: "a; b"))
        #expect(JobHandler.merged(retired: .done(detail: "a"), live: .retry(after: nil, reason: "r")) == .retry(after: nil, reason: "r"))
        #expect(JobHandler.merged(retired: .retry(after: .seconds(3), reason: "r"), live: .done(detail: "b")) == .retry(after: .seconds(3), reason: "r"))
        #expect(JobHandler.merged(retired: .retry(after: .seconds(3), reason: "r"), live: .retry(after: .seconds(9), reason: "q"))
                == .retry(after: .seconds(9), reason: "r"))
        // Retries on the parts' own schedules stay so (the attempt given back); a counted retry of either part counts.
        #expect(JobHandler.merged(retired: .retryOnSchedule(after: .seconds(5), reason: "r"), live: .retryOnSchedule(after: .seconds(2), reason: "q"))
                == .retryOnSchedule(after: .seconds(5), reason: "r"))
        #expect(JobHandler.merged(retired: .done(detail: "a"), live: .retryOnSchedule(after: .seconds(5), reason: "q"))
                == .retryOnSchedule(after: .seconds(5), reason: "q"))
        #expect(JobHandler.merged(retired: .retryOnSchedule(after: .seconds(5), reason: "r"), live: .retry(after: nil, reason: "q"))
                == .retry(after: .seconds(5), reason: "q"))
    }
}
