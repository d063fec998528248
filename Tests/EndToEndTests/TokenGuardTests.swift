import CountdownDomain
import CountdownStore
import CountdownWorker
import Foundation
import Postgres
import Testing
import TestSupport

/// The token guard end to end: a wrong Firebase project during a start burst clears at most
/// TOKEN_GUARD_MIN_REFUSALS tokens and `tokens restore` brings them back; real dead tokens are still cleared.
@Suite(.serialized) struct TokenGuardTests {
    static func count(_ system: CountdownSystem, _ sql: String) async throws -> Int {
        try await system.query("SELECT count(*) AS n FROM (\(sql)) AS counted")[0].decode("n")
    }

    @Test func aWrongProjectClearsAtMostTheMinimumAndRestoreBringsThemBack() async throws {
        let devices = 300
        // The guard counts each batch of pushes before it lets any of its refusals through; with PUSH_CONCURRENCY=8
        // batches are 2 pushes, so the first refusals clear their tokens before the guard trips (with the default
        // batches of 32, a first batch all refused trips it and clears none), and the restore below has work.
        let system = try await CountdownSystem(settings: ["START_LEAD_SECONDS": "60", "PUSH_CONCURRENCY": "8"])
        try await system.burst(devices, startsIn: 63)
        // Every send is refused as a token of another Firebase project, as when FCM_PROJECT_ID is wrong.
        try await system.fault(["status": 403, "errorCode": "SENDER_ID_MISMATCH", "forSeconds": 600])
        let worker = try system.startWorker()
        try await waitUntil(timeout: .seconds(60), "every start attempted once") {
            let stats = try await system.fakeClient.call("GET", "/fake/stats")
            return (stats.json["rejected"] as? Int ?? 0) >= devices
        }
        try await waitUntil(timeout: .seconds(10), "the ledger settled") {
            try await Self.count(system, "SELECT 1 FROM countdown_start_ledger WHERE status = 'sending'") == 0
        }
        let clearedDevices = try await system.query("SELECT device_id FROM devices WHERE fcm_token IS NULL")
            .map { try $0.decode("device_id", as: String.self) }
        let cleared = clearedDevices.count
        #expect(cleared <= 20, "the guard lets at most TOKEN_GUARD_MIN_REFUSALS refusals clear a token, cleared \(cleared)")
        #expect(cleared > 0, "below the minimum a refusal (of a batch that does not trip the guard) still clears its token")
        #expect(try await Self.count(system, "SELECT 1 FROM devices WHERE push_to_start_token IS NULL") == 0,
                "SENDER_ID_MISMATCH names the FCM token only")
        #expect(try await Self.count(system, "SELECT 1 FROM countdown_token_invalidations WHERE reason = 'SENDER_ID_MISMATCH'") == cleared)
        // The held rows are retried (and refused and held again) while the fault lasts: a count taken while a retry
        // is in flight sees some of them `sending`, so wait for a moment when every uncleared row is held.
        var held = 0
        try await waitUntil(timeout: .seconds(30), "the held refusals wait for a retry (held \(held) of \(devices - cleared))") {
            held = try await Self.count(system, "SELECT 1 FROM countdown_start_ledger WHERE status = 'pending' AND reason LIKE 'retry:token_guard%'")
            return held == devices - cleared
        }
        #expect(worker.log.contains("token guard tripped"))
        #expect(worker.log.contains("FCM_PROJECT_ID / GOOGLE_APPLICATION_CREDENTIALS"))

        // The project is right again; then the cleared tokens are restored, and their starts go out.
        _ = try await system.fakeClient.call("DELETE", "/fake/faults")
        let restore = try await system.admin(["tokens", "restore", "--since", "10m", "--reason", "SENDER_ID_MISMATCH", "--yes", "--json"])
        #expect(restore.status == 0, "\(restore.output)")
        #expect(restore.output.contains("\"fcm\" : \(cleared)"), "\(restore.output)")
        #expect(try await Self.count(system, "SELECT 1 FROM devices WHERE fcm_token IS NULL") == 0, "every cleared token is back")
        #expect(try await Self.count(system, "SELECT 1 FROM devices WHERE fcm_token = 'fcm-' || device_id") == devices)
        let restoredTokens = Set(clearedDevices.map { "fcm-" + $0 })
        try await system.waitForPushes(timeout: .seconds(30), "the restored devices' starts (their backfill)") { pushes in
            restoredTokens.isSubset(of: Set(pushes.events("start").map(\.fcmToken)))
        }
        await system.stop()
    }

    @Test func aRealShareOfDeadTokensIsStillCleared() async throws {
        let devices = 200
        let system = try await CountdownSystem(settings: ["START_LEAD_SECONDS": "60"])
        try await system.burst(devices, startsIn: 63)
        let dead = stride(from: 10, through: devices, by: 10).map { "fcm-d\($0)" }  // 10%
        for token in dead { try await system.fault(["token": token, "status": 404, "errorCode": "UNREGISTERED"]) }
        try system.startWorker()
        try await waitUntil(timeout: .seconds(60), "every start answered") {
            try await Self.count(system, "SELECT 1 FROM countdown_start_ledger WHERE status IN ('sent', 'failed')") == devices
        }
        let cleared = try await system.query("SELECT device_id FROM devices WHERE fcm_token IS NULL ORDER BY device_id")
            .map { try $0.decode("device_id", as: String.self) }
        #expect(Set(cleared) == Set(dead.map { String($0.dropFirst(4)) }))
        await system.stop()
    }
}
