import Postgres

/// Device writes with the ownership rule decided by the write itself.
///
/// The rule: anyone may create a device or update one that has no user; a device linked to a user changes
/// only with a bearer token. An authenticated user may take over a device linked to someone else (a login on
/// a shared phone): the device becomes theirs, keeps only what the request sent (every token, the time zone and
/// the locale it did not send are cleared, so the previous user's push-to-start or FCM token never serves the new
/// owner's streams), and the previous user's runtime sessions on it are ended and removed in the same
/// transaction. Removed means moved out of `live_activity_sessions` into `countdown_retired_sessions` (migration 8): the row keeps the runtime token the end push needs, and the
/// worker sends that end push (dismissing the activity at once) and deletes the row once it was accepted or the
/// token is dead. Sessions of streams that already ended are left to the stream's own end push, which goes to
/// every session whoever owns the device.
///
/// One statement does the work of a batch, without an explicit transaction: the upsert's conflict clause holds
/// the rule (`d.user_id IS NULL OR EXCLUDED.user_id IS NOT NULL`) and is evaluated on the latest version of the
/// row it locks, so there is no window between check and write and no separate lock. The same statement reads
/// each device's owner from its snapshot (one primary-key lookup per device, a subquery the planner cannot turn
/// into a scan of the table), which tells a takeover, a refusal and an unchanged registration apart, and retires
/// the sessions of the devices taken over. When two writers race for the same device, that owner can be older
/// than the row the write locked: the write is still decided correctly, only the outcome reported to the losing
/// caller (a takeover, or an anonymous 200 for a write that changed nothing) can be off, and a takeover the
/// snapshot did not see leaves that user's sessions to their stream's end.
public enum DeviceOwnershipQueries {
    /// One registration to write, with the caller's user (nil: an anonymous registration).
    public struct Item: Sendable {
        public let registration: DeviceRegistration
        public let userID: String?

        public init(registration: DeviceRegistration, userID: String?) {
            self.registration = registration
            self.userID = userID
        }
    }

    /// Which statement writes the rows.
    public enum Write: Sendable {
        /// A full registration (insert or update).
        case upsert
        /// A push-to-start-only update of an existing device.
        case pushToStartUpdate
    }

    /// Writes `items` (distinct device ids) in one statement and returns each item's outcome, in order.
    /// For `.pushToStartUpdate`, a device that does not exist has the outcome `nil`.
    public static func write(_ items: [Item], _ kind: Write, on connection: PostgresConnection) throws -> [DeviceUpsertOutcome?] {
        // Rows are locked by the write in the order given: device id order, as every writer of devices locks them.
        let ordered = items.sorted { $0.registration.deviceID < $1.registration.deviceID }
        var results: [String: (owner: String??, written: Bool, ended: Int)] = [:]
        for row in try connection.query(kind == .upsert ? SQL.upsertDevices : SQL.updatePushToStart, arrays(ordered)) {
            let owner: String? = try row.decode("owner")  // nil: no device; "": a device without a user
            results[try row.decode("device_id", as: String.self)] = (
                owner.map { $0.isEmpty ? nil : $0 }, try row.decode("written", as: Bool.self), try row.decode("sessions_ended", as: Int.self)
            )
        }
        return items.map { item -> DeviceUpsertOutcome? in
            let result = results[item.registration.deviceID] ?? (nil, false, 0)
            guard case let owner? = result.owner else {  // the device did not exist
                return kind == .pushToStartUpdate && !result.written ? nil : .written
            }
            guard let caller = item.userID else { return result.written || owner == nil ? .written : .refused }
            guard let owner, owner != caller, result.written else { return .written }
            return .takenOver(previousUser: owner, sessionsEnded: result.ended)
        }
    }

    private static func arrays(_ items: [Item]) -> [(any PostgresEncodable)?] {
        [
            PostgresTextArray(items.map(\.registration.deviceID)), PostgresTextArray(items.map(\.userID)),
            PostgresTextArray(items.map(\.registration.platform)), PostgresTextArray(items.map(\.registration.fcmToken)),
            PostgresTextArray(items.map(\.registration.pushToStartToken)), PostgresTextArray(items.map(\.registration.timezone)),
            PostgresTextArray(items.map(\.registration.locale)),
        ]
    }

    private enum SQL {
        /// The batch as rows, and each device's owner before the write: NULL when there is no such device, ''
        /// when it has no user. A scalar subquery per row is always a primary-key lookup, whatever generic plan
        /// the prepared statement keeps.
        static let input = """
            WITH input AS (
                SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
                    AS t(device_id, user_id, platform, fcm_token, push_to_start_token, timezone, locale)
            ),
            prior AS MATERIALIZED (
                SELECT i.device_id, (SELECT coalesce(d.user_id, '') FROM devices d WHERE d.device_id = i.device_id) AS owner
                FROM input i
            )
            """

        /// After the write: the devices taken over (linked to another user before, written for the caller now),
        /// the sessions on them that are not the new user's, of streams that have not ended, moved to
        /// `countdown_retired_sessions` (whose trigger tells the worker to end them), and one row per device of
        /// the batch with its prior owner, whether the write inserted or changed it, and the sessions it ended.
        static let retireAndReport = """
            , taken AS (
                SELECT i.device_id, i.user_id FROM input i JOIN prior p USING (device_id) JOIN written w USING (device_id)
                WHERE p.owner <> '' AND p.owner <> i.user_id
            ),
            \(SessionQueries.deleting(
                using: "taken t, streams st",
                where: "s.device_id = t.device_id AND st.id = s.stream_id AND coalesce(s.user_id, '') <> t.user_id"
                    + " AND st.status NOT IN ('ready', 'started', 'cancelled', 'expired')",
                returning: "s.stream_id, s.device_id, s.live_activity_token, s.user_id")),
            retired AS (
                INSERT INTO countdown_retired_sessions (stream_id, device_id, live_activity_token, user_id, reason)
                SELECT stream_id, device_id, live_activity_token, user_id, 'takeover' FROM gone
                ON CONFLICT DO NOTHING
                RETURNING device_id
            )
            SELECT p.device_id, p.owner, w.device_id IS NOT NULL AS written,
                   (SELECT count(*) FROM retired r WHERE r.device_id = p.device_id)::int AS sessions_ended
            FROM prior p LEFT JOIN written w USING (device_id)
            """

        /// Whether the row `d` is being taken over by the user of `source` (`EXCLUDED` or the input `t`): it
        /// is linked to a user, and the request's user is another one.
        static func takeover(from source: String) -> String { "d.user_id <> \(source).user_id" }

        /// An optional column of the request: the sent value, or the stored one when none was sent, except at a
        /// takeover, where nothing of the previous user's device is kept (a value not sent is cleared).
        static func kept(_ column: String, from source: String) -> String {
            "CASE WHEN \(takeover(from: source)) THEN \(source).\(column) ELSE coalesce(\(source).\(column), d.\(column)) END"
        }

        /// Idempotent: a repeat with the same values writes nothing. Absent optional values keep the stored
        /// ones, except at a takeover (the tokens, time zone and locale not sent are cleared, so nothing of the
        /// previous user's phone stays with the new owner); a non-iOS platform drops the push-to-start token.
        /// The change check compares with the kept values: a takeover changes `user_id`, so it always writes.
        static let upsertDevices = input + """
            , written AS (
                INSERT INTO devices AS d (device_id, user_id, platform, fcm_token, push_to_start_token, timezone, locale)
                SELECT * FROM input
                ON CONFLICT (device_id) DO UPDATE SET
                    user_id = coalesce(EXCLUDED.user_id, d.user_id),
                    platform = EXCLUDED.platform,
                    fcm_token = EXCLUDED.fcm_token,
                    push_to_start_token = CASE WHEN EXCLUDED.platform = 'ios'
                        THEN \(kept("push_to_start_token", from: "EXCLUDED")) END,
                    timezone = \(kept("timezone", from: "EXCLUDED")),
                    locale = \(kept("locale", from: "EXCLUDED"))
                WHERE (d.user_id IS NULL OR EXCLUDED.user_id IS NOT NULL)
                  AND (d.user_id, d.platform, d.fcm_token, d.push_to_start_token, d.timezone, d.locale) IS DISTINCT FROM
                      (coalesce(EXCLUDED.user_id, d.user_id), EXCLUDED.platform, EXCLUDED.fcm_token,
                       CASE WHEN EXCLUDED.platform = 'ios' THEN coalesce(EXCLUDED.push_to_start_token, d.push_to_start_token) END,
                       coalesce(EXCLUDED.timezone, d.timezone), coalesce(EXCLUDED.locale, d.locale))
                RETURNING d.device_id
            )
            """ + retireAndReport

        /// `written` is every existing device it was allowed to update (changed or not), so a missing one is told
        /// apart from an unchanged one. At a takeover the FCM token (not part of such a request) is cleared.
        static let updatePushToStart = input + """
            , written AS (
                UPDATE devices AS d SET platform = t.platform, push_to_start_token = t.push_to_start_token,
                    user_id = coalesce(t.user_id, d.user_id), timezone = \(kept("timezone", from: "t")),
                    locale = \(kept("locale", from: "t")),
                    fcm_token = CASE WHEN \(takeover(from: "t")) THEN NULL ELSE d.fcm_token END
                FROM input t
                WHERE d.device_id = t.device_id AND (d.user_id IS NULL OR t.user_id IS NOT NULL)
                RETURNING d.device_id
            )
            """ + retireAndReport
    }
}
