import CountdownDomain
import Foundation
import Postgres

/// The Android countdowns of a stream, kept on the start ledger (SPEC 10.4): a row of an Android device whose start
/// was accepted (`sent`) or may have been (`assumed_sent`: recorded by the restore guard, the start may have gone out
/// before the database went back) and whose end was not is a countdown showing there. Updates and ends claim such rows (taking their
/// next `seq` before the push) and settle them with the answers.
public enum AndroidCountdownQueries {
    /// One Android device's countdown for a stream, claimed for a message, with what that message needs.
    public struct Countdown: Sendable, Equatable {
        public var stream: String
        public var user: String
        public var device: String
        /// The `seq` of the message being sent (taken at the claim).
        public var seq: Int
        /// The planned start the device last accepted in an update or a re-registration's start (nil: only its first
        /// start).
        public var lastAcceptedStart: Date?
        /// When its start was accepted, and since when it may have gone out when it took more than one attempt (a
        /// resend after a crash): with the stream's `PlannedStartTimeline`, what the start carried.
        public var startSentAt: Date?
        public var startRepeatedSince: Date?
        public var fcmToken: String?
        public var locale: String?
        public var userLocale: String?
        /// The device's user now (another than `user` after a takeover).
        public var deviceUser: String?
        /// `TokenHash.of` the device's tokens now: written with an accepted re-registration start.
        public var tokenHash: String

        /// What the device shows (SPEC 12.2): the planned start of the last message it accepted, its start included; nil
        /// when not known.
        public func shown(_ timeline: PlannedStartTimeline, buildMargin: TimeInterval = SessionUpdatePolicy.startBuildMargin) -> Date? {
            lastAcceptedStart ?? startSentAt.flatMap {
                timeline.carriedByStart(sentAt: $0, buildMargin: buildMargin, firstAttemptAfter: startRepeatedSince)
            }
        }

        /// The latest planned start the device may show (what its end's ttl runs to, SPEC 12.2): any the stream had
        /// since its start was built (`buildMargin` before it was accepted, or its first attempt); all loaded when
        /// that is not known.
        public func latestShown(_ timeline: PlannedStartTimeline, buildMargin: TimeInterval = SessionUpdatePolicy.startBuildMargin) -> Date {
            let built = startSentAt.map { $0.addingTimeInterval(-buildMargin) }
            return timeline.latest(since: [built, startRepeatedSince].compactMap { $0 }.min() ?? .distantPast)
        }
    }

    /// Claims the stream's live Android countdowns (only `device`'s when given) for `seconds` for `owner`, where no
    /// other sender holds them, and gives each the next `seq`. `unlessShowing`: rows that show this planned start
    /// are left out: those that accepted it in an update (an update's retry sends only where it was not accepted),
    /// and those that accepted only their start when it went out after the planned start last moved (more than
    /// `SessionUpdatePolicy.startBuildMargin` after `planned_changed_at`, as for iOS sessions: an update job
    /// run by a runtime-session registration sends them nothing), unless the start took more than one attempt on a
    /// stream that has moved: a start resent after a crash carries `seq` 1 again, and an app that applied the first
    /// send (with the old planned start) ignores it.
    public static func claimLive(_ stream: String, device: String? = nil, seconds: Int, owner: String?, unlessShowing: Date? = nil,
                                 on connection: PostgresConnection) throws -> [Countdown] {
        try claim(where: """
            c.stream_id = $3 AND ($4::text IS NULL OR c.device_id = $4)
              AND ($5::timestamptz IS NULL OR (c.android_accepted_start IS DISTINCT FROM $5
                   AND (c.android_accepted_start IS NOT NULL OR c.sent_at IS NULL
                        OR c.sent_at <= (SELECT p.planned_changed_at FROM countdown_stream_progress p WHERE p.stream_id = c.stream_id)
                                        + make_interval(secs => $6)
                        OR (c.attempts > 1 AND EXISTS (SELECT 1 FROM countdown_stream_progress p
                                                       WHERE p.stream_id = c.stream_id AND p.planned_changed_at IS NOT NULL)))))
            """, [stream, device, unlessShowing, SessionUpdatePolicy.startBuildMargin], seconds: seconds, owner: owner, on: connection)
    }

    /// Claims, as `claimLive` does, the device's live Android countdowns that a device change concerns: those of
    /// another user than the device's (a takeover: they end at once) and those sent to other tokens than the
    /// device holds now (a re-registration: they get a `start` with the current state).
    public static func claimChanged(device: String, seconds: Int, owner: String?, on connection: PostgresConnection) throws -> [Countdown] {
        try claim(where: "c.device_id = $3 AND \(changed)", [device], seconds: seconds, owner: owner, on: connection)
    }

    /// How many of the countdowns on `device` that a device change concerns another sender holds now (an update or end
    /// in flight) or a `Retry-After` holds, and in how many seconds the earliest such hold ends (nil when none is
    /// held): the device change comes back for them. Counted before `owner` claims.
    public static func changedClaimedElsewhere(device: String, owner: String?, on connection: PostgresConnection) throws
        -> (count: Int, heldFor: Double?) {
        try heldElsewhere("""
            FROM countdown_start_ledger c JOIN devices d ON d.device_id = c.device_id AND d.platform = 'android'
            WHERE c.device_id = $2 AND \(changed)
            """, [device], owner: owner, on: connection)
    }

    /// Whether ledger row `c` on device `d` concerns a device change: another user than the device's (a takeover), or
    /// sent to other tokens than the device holds now (a re-registration).
    private static let changed = """
        (c.user_id IS DISTINCT FROM d.user_id
         OR (nullif(d.fcm_token, '') IS NOT NULL
             AND c.token_hash IS DISTINCT FROM md5(coalesce(d.fcm_token, '') || ':' || coalesce(d.push_to_start_token, ''))))
        """

    /// Claims the live Android countdowns (ledger `c`, joined with its device `d`) matching `condition`, whose
    /// parameters start at `$3`.
    private static func claim(where condition: String, _ parameters: [(any PostgresEncodable)?], seconds: Int, owner: String?,
                              on connection: PostgresConnection) throws -> [Countdown] {
        try connection.query("""
            UPDATE countdown_start_ledger l
            SET android_seq = greatest(l.android_seq, 1) + 1, android_claimed_by = $2,
                android_claimed_until = now() + make_interval(secs => $1)
            FROM (SELECT c.stream_id, c.user_id, c.device_id FROM countdown_start_ledger c
                  JOIN devices d ON d.device_id = c.device_id AND d.platform = 'android'
                  WHERE \(showing("c")) AND c.android_ended_at IS NULL
                    AND (c.android_claimed_until IS NULL OR c.android_claimed_until < now())
                    AND \(condition)
                  ORDER BY c.stream_id, c.user_id, c.device_id
                  FOR UPDATE OF c SKIP LOCKED) AS picked,
                 devices d LEFT JOIN users u ON u.id = d.user_id
            WHERE l.stream_id = picked.stream_id AND l.user_id = picked.user_id AND l.device_id = picked.device_id
              AND d.device_id = l.device_id
            RETURNING l.stream_id, l.user_id, l.device_id, l.android_seq, l.android_accepted_start, nullif(d.fcm_token, '') AS fcm_token,
                      d.push_to_start_token, d.locale AS locale, u.locale AS user_locale, d.user_id AS device_user, l.sent_at,
                      CASE WHEN l.attempts > 1 THEN l.created_at END AS repeated_since
            """, [seconds, owner] + parameters).map { row in
            let fcm: String? = try row.decode("fcm_token")
            return Countdown(stream: try row.decode("stream_id"), user: try row.decode("user_id"), device: try row.decode("device_id"),
                             seq: try row.decode("android_seq"), lastAcceptedStart: try row.decode("android_accepted_start"),
                             startSentAt: try row.decode("sent_at"), startRepeatedSince: try row.decode("repeated_since"), fcmToken: fcm,
                             locale: try row.decode("locale"), userLocale: try row.decode("user_locale"), deviceUser: try row.decode("device_user"),
                             tokenHash: TokenHash.of(fcm: fcm, pts: try row.decode("push_to_start_token")))
        }
    }

    /// Whether ledger row `alias` may be a countdown on its phone: its start accepted (`sent`), assumed so by the restore
    /// guard (`assumed_sent`), or left `sending` by a sender whose claim expired (a worker killed between the push
    /// service's answer and its record: the start may be showing, and an end to a phone that never showed it is
    /// harmless).
    static func showing(_ alias: String) -> String {
        "(\(alias).status IN ('sent', 'assumed_sent') OR (\(alias).status = 'sending' AND (\(alias).claimed_until IS NULL OR \(alias).claimed_until <= now())))"
    }

    /// How many of the stream's live Android countdowns another sender holds now, or a `Retry-After` holds
    /// (`EndDeliveryQueries.hold`, by no worker), and in how many seconds the earliest such hold ends (nil when none is held).
    /// Counted before `owner` claims: an anonymous `owner`'s own claims are owner-less too.
    public static func claimedElsewhere(_ stream: String, owner: String?, on connection: PostgresConnection) throws
        -> (count: Int, heldFor: Double?) {
        try heldElsewhere("FROM countdown_start_ledger c WHERE c.stream_id = $2", [stream], owner: owner, on: connection)
    }

    /// How many showing, not-ended countdowns among `rows` (a `FROM … WHERE` over ledger `c`, parameters from `$2`)
    /// another sender or a `Retry-After` holds now, and in how many seconds the earliest `Retry-After` hold ends.
    private static func heldElsewhere(_ rows: String, _ parameters: [(any PostgresEncodable)?], owner: String?,
                                      on connection: PostgresConnection) throws -> (count: Int, heldFor: Double?) {
        let row = try connection.query("""
            SELECT count(*) AS n,
                   extract(epoch FROM min(c.android_claimed_until) FILTER (WHERE c.android_claimed_by IS NULL) - now())::float8 AS seconds
            \(rows) AND \(showing("c")) AND c.android_ended_at IS NULL AND c.android_claimed_until >= now()
              AND (c.android_claimed_by IS NULL OR c.android_claimed_by IS DISTINCT FROM $1)
            """, [owner] + parameters).first
        return (try row?.decode("n", as: Int.self) ?? 0, try row?.decode("seconds", as: Double?.self) ?? nil)
    }

    /// What became of one claimed countdown's message.
    public struct Settlement: Sendable {
        public var user: String
        public var device: String
        /// An update was accepted: the device now shows the planned start it carried.
        public var accepted: Bool
        /// The countdown is over for good (`end` accepted, its FCM token dead, or undeliverable): why.
        public var endedReason: String?
        /// A start with the current state was accepted at these tokens (a re-registration).
        public var tokenHash: String?
        /// The planned start an accepted message carried when it is not the settlement's `plannedStart` (a
        /// re-registration's start).
        public var shownStart: Date?

        public init(user: String, device: String, accepted: Bool = false, endedReason: String? = nil, tokenHash: String? = nil,
                    shownStart: Date? = nil) {
            self.user = user
            self.device = device
            self.accepted = accepted
            self.endedReason = endedReason
            self.tokenHash = tokenHash
            self.shownStart = shownStart
        }
    }

    /// Writes the outcomes and releases the claims of `settlements` (one neither accepted nor ended only releases its
    /// row, to be sent again). `plannedStart`: what the accepted updates carried (a settlement's own `shownStart` first).
    public static func settle(_ stream: String, _ unordered: [Settlement], plannedStart: Date? = nil, on connection: PostgresConnection) throws {
        guard !unordered.isEmpty else { return }
        let settlements = unordered.sorted { ($0.user, $0.device) < ($1.user, $1.device) }
        try connection.execute("""
            UPDATE countdown_start_ledger l
            SET android_claimed_until = NULL, android_claimed_by = NULL, updated_at = now(),
                android_accepted_start = CASE WHEN t.accepted = 'y'
                    THEN coalesce(t.shown::timestamptz, $6::timestamptz, l.android_accepted_start) ELSE l.android_accepted_start END,
                android_ended_at = CASE WHEN t.ended IS NOT NULL THEN coalesce(l.android_ended_at, now()) ELSE l.android_ended_at END,
                android_end_reason = coalesce(l.android_end_reason, t.ended), token_hash = coalesce(t.token_hash, l.token_hash)
            FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $7::text[], $8::text[]) AS t(user_id, device_id, accepted, ended, token_hash, shown)
            WHERE l.stream_id = $1 AND l.user_id = t.user_id AND l.device_id = t.device_id
            """, [
                stream, PostgresTextArray(settlements.map(\.user)), PostgresTextArray(settlements.map(\.device)),
                PostgresTextArray(settlements.map { $0.accepted ? "y" : "n" }), PostgresTextArray(settlements.map(\.endedReason)), plannedStart,
                PostgresTextArray(settlements.map(\.tokenHash)),
                PostgresTextArray(settlements.map { $0.shownStart?.postgresText }),
            ])
    }

    /// How many Android starts of the stream are being sent now (claimed, the claim not expired): once accepted they
    /// are countdowns an update or end must reach, so those jobs wait for them.
    public static func startsInFlight(_ stream: String, on connection: PostgresConnection) throws -> Int {
        try connection.query("""
            SELECT count(*) AS n FROM countdown_start_ledger l JOIN devices d ON d.device_id = l.device_id AND d.platform = 'android'
            WHERE l.stream_id = $1 AND l.status = 'sending' AND l.claimed_until > now()
            """, [stream]).first?.decode("n", as: Int.self) ?? 0
    }

    /// The stream's (`s`) Android countdowns showing, being started, or left `sending` by a dead sender, as a
    /// `FROM … WHERE` clause: they need its update and end jobs.
    public static let liveRows = """
        FROM countdown_start_ledger a JOIN devices ad ON ad.device_id = a.device_id AND ad.platform = 'android'
        WHERE a.stream_id = s.id AND a.android_ended_at IS NULL
          AND a.status IN ('sent', 'assumed_sent', 'sending')
        """

    /// Whether the stream (`s`) has an Android countdown showing or a start of one in flight: `true`, or NULL when it
    /// has none. It walks the stream's own ledger rows in key order and stops at the first Android one; as an
    /// `EXISTS`, PostgreSQL may plan it as a hashed subquery over every live row of the ledger, each joined with its
    /// device.
    public static let liveCondition = "(SELECT true \(liveRows) ORDER BY a.user_id, a.device_id LIMIT 1)"
}
