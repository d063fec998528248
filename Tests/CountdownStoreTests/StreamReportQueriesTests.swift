import CountdownStore
import Postgres
import Testing

/// The reads of a stream's report: the ledger with each device's platform now and an Android device's countdown
/// (only for a sent start), the participants creator first, and end pushes retrying before undeliverable.
@Suite struct StreamReportQueriesTests {
    static let rows = """
        INSERT INTO users (id, display_name, locale) VALUES ('selin', 'Selin', 'tr'), ('mert', 'Mert', 'en');
        INSERT INTO devices (device_id, user_id, platform) VALUES
            ('selin-phone', 'selin', 'ios'), ('mert-pixel', 'mert', 'android'), ('mert-tablet', 'mert', 'android');
        INSERT INTO streams (id, title, planned_start_at) VALUES ('s', 'S', now() + interval '30 minutes'), ('other', 'O', now());
        INSERT INTO stream_participants (stream_id, user_id, role, position) VALUES ('s', 'mert', 'guest', 1), ('s', 'selin', 'creator', 0);
        INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status, reason, attempts, android_seq, android_ended_at, android_end_reason) VALUES
            ('s', 'selin', 'selin-phone', 'sent', NULL, 1, 0, NULL, NULL),
            ('s', 'mert', 'mert-pixel', 'sent', NULL, 2, 3, now(), 'cancelled'),
            ('s', 'mert', 'mert-tablet', 'failed', 'dead_token:fcm', 1, 0, NULL, NULL),
            ('s', 'mert', 'mert-gone', 'sent', NULL, 1, 0, NULL, NULL),
            ('other', 'selin', 'selin-phone', 'sent', NULL, 1, 0, NULL, NULL);
        INSERT INTO countdown_end_attempts (stream_id, device_id, attempts, last_reason) VALUES ('s', 'selin-phone', 2, 'retry');
        INSERT INTO countdown_undeliverable_ends (stream_id, device_id, live_activity_token, reason, attempts, first_failed_at) VALUES
            ('s', 'selin-phone', 'run-old', 'rejected', 5, now() - interval '1 hour'), ('other', 'x', 'run-x', 'retry', 1, now());
        """

    @Test func theLedgerCarriesThePlatformAndAnAndroidCountdownOnlyForASentStart() async throws {
        try await StoreDatabase.with(prefix: "store_report_ledger") { client in
            try await client.seed(Self.rows)
            let ledger = try await client.withConnection { try StreamReportQueries.ledger("s", on: $0) }
            let described = ledger.map { entry in
                [entry.userID, entry.deviceID, entry.status, entry.reason ?? "-", String(entry.attempts), entry.platform ?? "gone",
                 entry.android.map { "seq=\($0.seq) ended=\($0.endedAt != nil) \($0.endedReason ?? "-")" } ?? "no-countdown"].joined(separator: " ")
            }
            #expect(described == [
                "mert mert-gone sent - 1 gone no-countdown",
                "mert mert-pixel sent - 2 android seq=3 ended=true cancelled",
                "mert mert-tablet failed dead_token:fcm 1 android no-countdown",
                "selin selin-phone sent - 1 ios no-countdown",
            ])
            #expect(ledger.allSatisfy { $0.updatedAt != nil })
        }
    }

    @Test func participantsCreatorFirstAndEndDeliveryRetryingBeforeUndeliverable() async throws {
        try await StoreDatabase.with(prefix: "store_report_rows") { client in
            try await client.seed(Self.rows)
            let (stream, missing, participants, ends) = try await client.withConnection { connection in
                (try StreamReportQueries.stream("s", on: connection), try StreamReportQueries.stream("nope", on: connection),
                 try StreamReportQueries.participants("s", on: connection), try StreamReportQueries.endDelivery("s", on: connection))
            }
            #expect(stream?.title == "S" && missing == nil)
            #expect(participants.map { "\($0.userID) \($0.name) \($0.role) \($0.position)" } == ["selin Selin creator 0", "mert Mert guest 1"])
            #expect(ends.map { "\($0.deviceID) \($0.state) \($0.reason) \($0.attempts) \($0.recordedAt != nil) \($0.token ?? "-")" } == [
                "selin-phone retrying retry 2 false -", "selin-phone undeliverable rejected 5 true run-old",
            ])
        }
    }
}
