import Postgres

/// Device writes with the ownership rule decided in the same transaction as the write.
///
/// The rule: anyone may create a device or update one that has no user; a device linked to a user changes
/// only with a bearer token. An authenticated user may take over a device linked to someone else (a login on
/// a shared phone): the device becomes theirs. The previous user's runtime sessions on it stay until the
/// worker ends them: a session row holds the runtime token its end push needs (removing it here would leave
/// that Live Activity counting down on the phone with nothing able to end it), and the end flow sends the
/// end push when the stream ends and then deletes the session, whoever owns the device by then. Nothing
/// else reaches the previous user through the device: starts, backfills and reminders follow the device's
/// current user.
///
/// The write itself decides: the upsert's conflict clause holds the rule (`d.user_id IS NULL OR
/// EXCLUDED.user_id IS NOT NULL`) and is evaluated on the latest version of the row it locks, so there is no
/// window between check and write, also for a device inserted concurrently by another writer, and no separate
/// lock is needed. The owners read before the write (unlocked) only tell a takeover for its count and answer;
/// an anonymous registration the write did not apply is told refused or unchanged by the owner the write saw.
enum DeviceOwnership {
    /// Which statement writes the rows.
    enum Write {
        /// A full registration (insert or update).
        case upsert
        /// A push-to-start-only update of an existing device.
        case pushToStartUpdate
    }

    /// Writes `items` (distinct device ids) in one transaction and returns each item's outcome, in order.
    /// For `.pushToStartUpdate`, a device that does not exist has the outcome `nil`.
    static func write(_ items: [DeviceUpsertBatcher.Item], _ kind: Write, on connection: PostgresConnection) throws -> [DeviceUpsertOutcome?] {
        try connection.transaction { connection in
            let ids = items.map(\.registration.deviceID)
            var owners: [String: String?] = [:]  // existing devices (locked) → their user
            for row in try connection.query(SQL.owners, [PostgresTextArray(ids)]) {
                owners[try row.decode("device_id", as: String.self)] = try row.decode("user_id", as: String?.self)
            }
            // Rows are locked by the write in the order given: device id order, as every writer of devices locks them.
            let ordered = items.sorted { $0.registration.deviceID < $1.registration.deviceID }
            let written: Set<String>
            switch kind {
            case .upsert:
                written = Set(try connection.query(SQL.upsertDevices, arrays(ordered)).map { try $0.decode("device_id", as: String.self) })
            case .pushToStartUpdate:
                written = Set(try connection.query(SQL.updatePushToStart, arrays(ordered)).map { try $0.decode("device_id", as: String.self) })
            }
            // Anonymous items the write did not apply: refused by its conflict clause, or unchanged; the row as the
            // write left it (locked by the conflict clause until commit) says which.
            let unapplied = items.filter { $0.userID == nil && !written.contains($0.registration.deviceID) }
            if !unapplied.isEmpty {
                for row in try connection.query(SQL.owners, [PostgresTextArray(unapplied.map(\.registration.deviceID))]) {
                    owners[try row.decode("device_id", as: String.self)] = try row.decode("user_id", as: String?.self)
                }
            }
            var takeovers: [(device: String, previous: String)] = []
            for item in items {
                guard let caller = item.userID, case let previous?? = owners[item.registration.deviceID], previous != caller else { continue }
                takeovers.append((item.registration.deviceID, previous))
            }
            var pending: [String: Int] = [:]  // device → the previous user's sessions awaiting their end push
            if !takeovers.isEmpty {
                let rows = try connection.query(SQL.previousSessions, [
                    PostgresTextArray(takeovers.map(\.device)), PostgresTextArray(takeovers.map(\.previous)),
                ])
                for row in rows { pending[try row.decode("device_id", as: String.self)] = try row.decode("sessions", as: Int.self) }
            }
            return items.map { item -> DeviceUpsertOutcome? in
                let device = item.registration.deviceID
                if item.userID == nil && written.contains(device) { return .written }
                guard let owner = owners[device] else {
                    return kind == .pushToStartUpdate && !written.contains(device) ? nil : .written
                }
                guard let caller = item.userID else { return owner == nil ? .written : .refused }
                if let owner, owner != caller { return .takenOver(previousUser: owner, sessionsPending: pending[device] ?? 0) }
                return .written
            }
        }
    }

    private static func arrays(_ items: [DeviceUpsertBatcher.Item]) -> [(any PostgresEncodable)?] {
        [
            PostgresTextArray(items.map(\.registration.deviceID)), PostgresTextArray(items.map(\.userID)),
            PostgresTextArray(items.map(\.registration.platform)), PostgresTextArray(items.map(\.registration.fcmToken)),
            PostgresTextArray(items.map(\.registration.pushToStartToken)), PostgresTextArray(items.map(\.registration.timezone)),
            PostgresTextArray(items.map(\.registration.locale)),
        ]
    }

    private enum SQL {
        /// Each id looked up by primary key: `device_id = ANY($1)` got a generic plan that scanned the whole table
        /// once the statement was prepared.
        static let owners = """
            SELECT d.device_id, d.user_id FROM unnest($1::text[]) AS t(device_id) JOIN devices d ON d.device_id = t.device_id
            """

        /// Idempotent: a repeat with the same values writes nothing. Absent optional values keep the stored
        /// ones; a non-iOS platform drops the push-to-start token. Returns the devices inserted or changed.
        static let upsertDevices = """
            INSERT INTO devices AS d (device_id, user_id, platform, fcm_token, push_to_start_token, timezone, locale)
            SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
            ON CONFLICT (device_id) DO UPDATE SET
                user_id = coalesce(EXCLUDED.user_id, d.user_id),
                platform = EXCLUDED.platform,
                fcm_token = EXCLUDED.fcm_token,
                push_to_start_token = CASE WHEN EXCLUDED.platform = 'ios'
                    THEN coalesce(EXCLUDED.push_to_start_token, d.push_to_start_token) END,
                timezone = coalesce(EXCLUDED.timezone, d.timezone),
                locale = coalesce(EXCLUDED.locale, d.locale)
            WHERE (d.user_id IS NULL OR EXCLUDED.user_id IS NOT NULL)
              AND (d.user_id, d.platform, d.fcm_token, d.push_to_start_token, d.timezone, d.locale) IS DISTINCT FROM
                  (coalesce(EXCLUDED.user_id, d.user_id), EXCLUDED.platform, EXCLUDED.fcm_token,
                   CASE WHEN EXCLUDED.platform = 'ios' THEN coalesce(EXCLUDED.push_to_start_token, d.push_to_start_token) END,
                   coalesce(EXCLUDED.timezone, d.timezone), coalesce(EXCLUDED.locale, d.locale))
            RETURNING d.device_id
            """

        /// Returns every existing device it is allowed to update (changed or not), so a missing one is told
        /// apart from an unchanged one.
        static let updatePushToStart = """
            UPDATE devices AS d SET platform = t.platform, push_to_start_token = t.push_to_start_token,
                user_id = coalesce(t.user_id, d.user_id), timezone = coalesce(t.timezone, d.timezone),
                locale = coalesce(t.locale, d.locale)
            FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
                AS t(device_id, user_id, platform, fcm_token, push_to_start_token, timezone, locale)
            WHERE d.device_id = t.device_id AND (d.user_id IS NULL OR t.user_id IS NOT NULL)
            RETURNING d.device_id
            """

        /// How many runtime sessions the previous users have on the devices taken over.
        static let previousSessions = """
            SELECT s.device_id, count(*)::int AS sessions FROM live_activity_sessions s
            JOIN unnest($1::text[], $2::text[]) AS t(device_id, user_id) ON s.device_id = t.device_id AND s.user_id = t.user_id
            GROUP BY s.device_id
            """
    }
}
