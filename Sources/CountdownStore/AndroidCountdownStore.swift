import Foundation
import Postgres

/// The Android countdowns of a stream, kept on the start ledger (SPEC 10.4): a row of an Android device whose start
/// was accepted and whose end was not is a countdown showing there. Updates and ends claim such rows (taking their
/// next `seq` before the push) and settle them with the answers.
public enum AndroidCountdownStore {
    /// One Android device's countdown for a stream, claimed for a message, with what that message needs.
    public struct Countdown: Sendable, Equatable {
        public var user: String
        public var device: String
        /// The `seq` of the message being sent (taken at the claim).
        public var seq: Int
        /// The planned start the device last accepted in an update (nil: only its start).
        public var lastAcceptedStart: Date?
        public var fcmToken: String?
        public var locale: String?
        public var userLocale: String?
    }

    /// Claims the stream's live Android countdowns (only `device`'s when given) for `seconds` for `owner`, where no
    /// other sender holds them, and gives each the next `seq`. `unlessShowing`: rows that already accepted this
    /// planned start are left out (an update's retry sends only where it was not accepted).
    public static func claimLive(_ stream: String, device: String? = nil, seconds: Int, owner: String?, unlessShowing: Date? = nil,
                                 on connection: PostgresConnection) throws -> [Countdown] {
        try connection.query("""
            UPDATE countdown_start_ledger l
            SET android_seq = greatest(l.android_seq, 1) + 1, android_claimed_by = $3,
                android_claimed_until = now() + make_interval(secs => $2)
            FROM (SELECT c.stream_id, c.user_id, c.device_id FROM countdown_start_ledger c
                  JOIN devices d ON d.device_id = c.device_id AND d.platform = 'android'
                  WHERE c.stream_id = $1 AND c.status = 'sent' AND c.android_ended_at IS NULL
                    AND ($4::text IS NULL OR c.device_id = $4)
                    AND (c.android_claimed_until IS NULL OR c.android_claimed_until < now())
                    AND ($5::timestamptz IS NULL OR c.android_accepted_start IS DISTINCT FROM $5)
                  ORDER BY c.user_id, c.device_id
                  FOR UPDATE OF c SKIP LOCKED) AS picked,
                 devices d LEFT JOIN users u ON u.id = d.user_id
            WHERE l.stream_id = picked.stream_id AND l.user_id = picked.user_id AND l.device_id = picked.device_id
              AND d.device_id = l.device_id
            RETURNING l.user_id, l.device_id, l.android_seq, l.android_accepted_start, nullif(d.fcm_token, '') AS fcm_token,
                      d.locale AS locale, u.locale AS user_locale
            """, [stream, seconds, owner, device, unlessShowing]).map { row in
            Countdown(user: try row.decode("user_id"), device: try row.decode("device_id"), seq: try row.decode("android_seq"),
                      lastAcceptedStart: try row.decode("android_accepted_start"), fcmToken: try row.decode("fcm_token"),
                      locale: try row.decode("locale"), userLocale: try row.decode("user_locale"))
        }
    }

    /// How many of the stream's live Android countdowns another sender holds now.
    public static func claimedElsewhere(_ stream: String, owner: String?, on connection: PostgresConnection) throws -> Int {
        try connection.query("""
            SELECT count(*) AS n FROM countdown_start_ledger
            WHERE stream_id = $1 AND status = 'sent' AND android_ended_at IS NULL AND android_claimed_until >= now()
              AND android_claimed_by IS DISTINCT FROM $2
            """, [stream, owner]).first?.decode("n", as: Int.self) ?? 0
    }

    /// What became of one claimed countdown's message.
    public struct Settlement: Sendable {
        public var user: String
        public var device: String
        /// An update was accepted: the device now shows the planned start it carried.
        public var accepted: Bool
        /// The countdown is over for good (`end` accepted, its FCM token dead, or undeliverable): why.
        public var endedReason: String?

        public init(user: String, device: String, accepted: Bool = false, endedReason: String? = nil) {
            self.user = user
            self.device = device
            self.accepted = accepted
            self.endedReason = endedReason
        }
    }

    /// Writes the outcomes and releases the claims of `settlements` (one neither accepted nor ended only releases its
    /// row, to be sent again). `plannedStart`: what the accepted updates carried.
    public static func settle(_ stream: String, _ unordered: [Settlement], plannedStart: Date? = nil, on connection: PostgresConnection) throws {
        guard !unordered.isEmpty else { return }
        let settlements = unordered.sorted { ($0.user, $0.device) < ($1.user, $1.device) }
        try connection.execute("""
            UPDATE countdown_start_ledger l
            SET android_claimed_until = NULL, android_claimed_by = NULL, updated_at = now(),
                android_accepted_start = CASE WHEN t.accepted = 'y' THEN coalesce($6::timestamptz, l.android_accepted_start) ELSE l.android_accepted_start END,
                android_ended_at = CASE WHEN t.ended IS NOT NULL THEN coalesce(l.android_ended_at, now()) ELSE l.android_ended_at END,
                android_end_reason = coalesce(l.android_end_reason, t.ended)
            FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS t(user_id, device_id, accepted, ended)
            WHERE l.stream_id = $1 AND l.user_id = t.user_id AND l.device_id = t.device_id
            """, [
                stream, PostgresTextArray(settlements.map(\.user)), PostgresTextArray(settlements.map(\.device)),
                PostgresTextArray(settlements.map { $0.accepted ? "y" : "n" }), PostgresTextArray(settlements.map(\.endedReason)), plannedStart,
            ])
    }

    /// Whether the stream has an Android countdown showing (it then needs its update and end jobs).
    public static let liveCondition = """
        EXISTS (SELECT 1 FROM countdown_start_ledger a JOIN devices ad ON ad.device_id = a.device_id AND ad.platform = 'android'
                WHERE a.stream_id = s.id AND a.status = 'sent' AND a.android_ended_at IS NULL)
        """
}
