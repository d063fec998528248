import Foundation
import Postgres

/// Seeding the way the backend writes rows (set-based SQL), and reading what should have been sent.
extension CountdownSystem {
    /// Users and devices for `streams` streams of three participants each (creator k=0, guests k=1, 2).
    ///
    /// Each user gets 1 or 2 eligible iOS devices (by the parity of i+k), and some get ineligible ones: an Android
    /// device (k+i divisible by 3) and an iOS device without a push-to-start token (divisible by 5). FCM tokens end
    /// in a distinct 8-digit number (`tokenBase` + ...), so the fake's logs (which show the last 8 characters) tell
    /// devices apart. The device outbox rows are removed in the same transaction: these devices registered before
    /// any of the seeded streams existed, so their backfills would find nothing (and are not what is measured).
    ///
    /// `androidShare` (0-1, for `ANDROID_COUNTDOWN=on`): that share of the eligible devices (chosen by the first two
    /// bytes of the md5 of the device id: the same devices in every run) is Android with an FCM token and no
    /// push-to-start token, and the ineligible Android device has no FCM token, so the same devices get a start as
    /// with 0, only on either platform.
    public func seedPeople(prefix: String, streams: Int, tokenBase: Int = 0, androidShare: Double = 0) async throws {
        let androidThreshold = androidShare > 0 ? Int((androidShare * 65536).rounded(.toNearestOrEven)) : 0
        try await db.transaction { connection in
            try connection.execute("""
                INSERT INTO users (id, display_name, locale)
                SELECT $1::text || 'u' || i || '_' || k, 'User ' || i || ' ' || k, CASE WHEN (i + k) % 4 = 0 THEN 'en' ELSE 'tr' END
                FROM generate_series(1, $2::bigint) i, generate_series(0, 2) k
                """, [prefix, streams])
            try connection.execute("""
                INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token, locale)
                SELECT g.device, $1::text || 'u' || g.i || '_' || g.k,
                       CASE WHEN g.j = 3 OR (g.j <= 2 AND g.android) THEN 'android' ELSE 'ios' END,
                       CASE WHEN g.j = 3 AND $4::boolean THEN NULL
                            ELSE 'fcm-' || md5($1::text || g.i || '_' || g.k || '_' || g.j)
                                 || lpad(($3::bigint + (g.i * 3 + g.k) * 5 + g.j)::text, 8, '0') END,
                       CASE WHEN g.j <= 2 AND NOT g.android
                            THEN md5('pts-' || $1::text || g.i || '_' || g.k || '_' || g.j) || md5($1::text || g.i) END,
                       CASE WHEN (g.i + g.j) % 7 = 0 THEN 'en-US' END
                FROM (SELECT i, k, j, d.device,
                             get_byte(decode(md5(d.device), 'hex'), 0) * 256 + get_byte(decode(md5(d.device), 'hex'), 1) < $5::bigint AS android
                      FROM generate_series(1, $2::bigint) i, generate_series(0, 2) k, generate_series(1, 4) j,
                           LATERAL (SELECT $1::text || 'd' || i || '_' || k || '_' || j AS device) d
                      WHERE (j = 1) OR (j = 2 AND (i + k) % 2 = 1) OR (j = 3 AND (i + k) % 3 = 0) OR (j = 4 AND (i + k) % 5 = 0)) g
                """, [prefix, streams, tokenBase, androidShare > 0, androidThreshold])
            try connection.execute("DELETE FROM countdown_outbox WHERE topic = 'device'")
        }
    }

    /// `count` scheduled streams `<streamPrefix>1…` planned at `plannedAtEpoch`, stream i with the people of index i
    /// (`seedPeople(prefix: peoplePrefix, ...)`).
    public func seedStreams(peoplePrefix: String, streamPrefix: String, count: Int, plannedAtEpoch: Double) async throws {
        try await db.transaction { connection in
            try Self.seedStreams(peoplePrefix: peoplePrefix, streamPrefix: streamPrefix, count: count, plannedAtEpoch: plannedAtEpoch,
                                 on: connection)
        }
    }

    /// `seedStreams` in the caller's transaction on `connection`.
    public static func seedStreams(peoplePrefix: String, streamPrefix: String, count: Int, plannedAtEpoch: Double,
                                   on connection: PostgresConnection) throws {
        try connection.execute("""
            INSERT INTO streams (id, title, planned_start_at)
            SELECT $1::text || i, 'Yayın ' || i || ': akşam sohbeti', to_timestamp($2::float8)
            FROM generate_series(1, $3::bigint) i
            """, [streamPrefix, plannedAtEpoch, count])
        try connection.execute("""
            INSERT INTO stream_participants (stream_id, user_id, role, position)
            SELECT $1::text || i, $2::text || 'u' || i || '_' || k, CASE WHEN k = 0 THEN 'creator' ELSE 'guest' END, k
            FROM generate_series(1, $3::bigint) i, generate_series(0, 2) k
            """, [streamPrefix, peoplePrefix, count])
    }

    /// What PostgreSQL says should get a start, read from the contract tables (SPEC section 5), not the ledger:
    /// (stream, push-to-start token) of every iOS device with both tokens, of the creator and guests of each scheduled
    /// stream whose id starts with `streamPrefix`, whose user has not turned live_stream off; with `android`
    /// (`ANDROID_COUNTDOWN=on`, SPEC 10.4) also (stream, FCM token) of every such Android device with an FCM token.
    public func expectedStarts(streamPrefix: String, android: Bool = false) async throws -> Set<StartKey> {
        let rows = try await query("""
            SELECT p.stream_id, CASE WHEN d.platform = 'android' THEN d.fcm_token ELSE d.push_to_start_token END AS token
            FROM streams s
            JOIN stream_participants p ON p.stream_id = s.id
            JOIN devices d ON d.user_id = p.user_id
            LEFT JOIN notification_preferences np ON np.user_id = p.user_id AND np.category = 'live_stream'
            WHERE starts_with(s.id, $1::text) AND s.status = 'scheduled'
              AND ((d.platform = 'ios' AND coalesce(d.fcm_token, '') <> '' AND coalesce(d.push_to_start_token, '') <> '')
                   OR ($2::boolean AND d.platform = 'android' AND coalesce(d.fcm_token, '') <> ''))
              AND coalesce(np.enabled, true)
            """, [streamPrefix, android])
        return Set(try rows.map { StartKey(stream: try $0.decode("stream_id"), token: try $0.decode("token")) })
    }

    /// Start ledger rows of the streams whose id starts with `streamPrefix`, by `status` or `status:reason` (the
    /// reason's part before its first colon), and the attempts beyond each row's first, summed.
    public func ledgerCounts(streamPrefix: String) async throws -> (byStatus: [String: Int], extraAttempts: Int) {
        let rows = try await query("""
            SELECT status || coalesce(':' || split_part(reason, ':', 1), '') AS state, count(*) AS n,
                   coalesce(sum(greatest(attempts - 1, 0)), 0)::bigint AS extra
            FROM countdown_start_ledger WHERE starts_with(stream_id, $1::text) GROUP BY 1 ORDER BY 1
            """, [streamPrefix])
        var byStatus: [String: Int] = [:]
        var extra = 0
        for row in rows {
            byStatus[try row.decode("state")] = try row.decode("n")
            extra += try row.decode("extra", as: Int.self)
        }
        return (byStatus, extra)
    }
}
