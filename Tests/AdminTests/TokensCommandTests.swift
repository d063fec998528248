import Foundation
import Postgres
import Testing

/// `countdown-admin tokens list|restore` against rows the worker's TokenHygiene would have written.
@Suite struct TokensCommandTests {
    struct Entry: Decodable { var deviceID: String; var token: String; var value: String; var reason: String; var restoredAt: Date? }
    struct Report: Decodable { var restored: [String: Int]; var skippedChanged: Int }

    /// Clears `device`'s column as the worker does and records it with the device's owner, `secondsAgo` in the past.
    static func cleared(_ fixture: AdminFixture, device: String, kind: String, reason: String, secondsAgo: Double) async throws {
        let column = kind == "fcm" ? "fcm_token" : "push_to_start_token"
        try await fixture.execute("""
            WITH old AS (SELECT \(column) AS value FROM devices WHERE device_id = $1),
            cleared AS (UPDATE devices SET \(column) = NULL WHERE device_id = $1 RETURNING device_id, user_id)
            INSERT INTO countdown_token_invalidations (device_id, token_kind, old_value, reason, invalidated_at, user_id)
            SELECT $1, $2, old.value, $3, now() - make_interval(secs => $4), cleared.user_id FROM old, cleared
            """, [device, kind, reason, secondsAgo])
    }

    @Test func listShowsClearedTokensRedactedSinceADurationOrATime() async throws {
        try await AdminFixture.with { fixture in
            try await fixture.people(["ada", "bob"])
            try await Self.cleared(fixture, device: "ada-phone", kind: "fcm", reason: "SENDER_ID_MISMATCH", secondsAgo: 60)
            try await Self.cleared(fixture, device: "bob-phone", kind: "push_to_start", reason: "BadDeviceToken", secondsAgo: 3 * 3600)
            let recent = try await fixture.admin("tokens", "list", "--since", "15m", "--json")
            #expect(recent.status == 0, "\(recent)")
            let entries = try recent.json([Entry].self)
            #expect(entries.map(\.deviceID) == ["ada-phone"])
            #expect(entries.first?.value == "…", "a token of 16 characters or fewer is masked whole: \(entries)")
            #expect(!recent.stdout.contains("fcm-ada-phone"))
            let all = try await fixture.admin("tokens", "list", "--since", "2020-01-01T00:00:00Z", "--json")
            #expect(try all.json([Entry].self).count == 2)
            let text = try await fixture.admin("tokens", "list", "--since", "1d")
            #expect(text.stdout.contains("BadDeviceToken"), "\(text)")
        }
    }

    @Test func restorePutsBackOnlyWhereTheTokenDidNotChange() async throws {
        try await AdminFixture.with { fixture in
            try await fixture.people(["ada", "bob", "cem"])
            for user in ["ada", "bob", "cem"] {
                try await Self.cleared(fixture, device: "\(user)-phone", kind: "fcm", reason: "SENDER_ID_MISMATCH", secondsAgo: 30)
            }
            try await Self.cleared(fixture, device: "cem-phone", kind: "push_to_start", reason: "BadDeviceToken", secondsAgo: 30)
            // bob's app registered a new token meanwhile: it stays.
            try await fixture.execute("UPDATE devices SET fcm_token = 'fresh-bob' WHERE device_id = 'bob-phone'")
            let run = try await fixture.admin("tokens", "restore", "--since", "5m", "--reason", "SENDER_ID_MISMATCH", "--yes", "--json")
            #expect(run.status == 0, "\(run)")
            let report = try run.json(Report.self)
            #expect(report.restored == ["fcm": 2])
            #expect(report.skippedChanged == 1)
            let tokens = try await fixture.query("SELECT device_id, fcm_token, push_to_start_token FROM devices ORDER BY device_id")
            #expect(try tokens.map { try $0.decode("fcm_token", as: String?.self) } == ["fcm-ada-phone", "fresh-bob", "fcm-cem-phone"])
            #expect(try tokens[2].decode("push_to_start_token", as: String?.self) == nil, "--reason kept the BadDeviceToken one cleared")
            // A second restore finds nothing left to do.
            let again = try await fixture.admin("tokens", "restore", "--since", "5m", "--reason", "SENDER_ID_MISMATCH", "--yes", "--json")
            #expect(try again.json(Report.self).restored.isEmpty)
        }
    }

    @Test func restoreRecreatesASessionWhoseRuntimeTokenWasCleared() async throws {
        try await AdminFixture.with { fixture in
            try await fixture.stream("s1", startsIn: 600, people: ["ada"])
            try await fixture.execute("""
                INSERT INTO countdown_token_invalidations (device_id, token_kind, old_value, reason, stream_id, user_id)
                VALUES ('ada-phone', 'runtime', 'activity-token-1', 'Unregistered', 's1', 'ada')
                """)
            let run = try await fixture.admin("tokens", "restore", "--since", "1h", "--yes", "--json")
            #expect(try run.json(Report.self).restored == ["runtime": 1], "\(run)")
            #expect(try await fixture.count("SELECT 1 FROM live_activity_sessions WHERE stream_id = 's1' AND live_activity_token = 'activity-token-1'") == 1)
        }
    }

    @Test func usageErrors() async throws {
        try await AdminFixture.with { fixture in
            try await fixture.expectUsageError(["tokens", "restore", "--yes"], "restore needs --since T (e.g. --since 2h)", usage: "usage: countdown-admin tokens")
            let unconfirmed = try await fixture.admin("tokens", "restore", "--since", "2h")
            #expect(unconfirmed.status == 2, "\(unconfirmed)")
            #expect(unconfirmed.errorLines == ["countdown-admin: tokens restore changes data and asks first; not on a terminal, so pass --yes to confirm"])
            try await fixture.expectUsageError(["tokens", "list", "--since", "yesterday"],
                                               "--since must be an RFC 3339 time (2026-12-01T20:00:00Z) or a duration ago (90s, 15m, 2h), got \"yesterday\"",
                                               usage: "usage: countdown-admin tokens")
        }
    }
}
