import Postgres

extension DeviceOwnershipQueries {
    /// Deletes up to `limit` devices that never had a user (migration 30 marks those that had one) and were not
    /// written for `seconds` by PostgreSQL's clock; returns how many. Rows another writer holds are skipped
    /// (`SKIP LOCKED`), so concurrent sweeps and registrations never wait for each other.
    public static func expireOwnerless(unwrittenFor seconds: Int, limit: Int, on connection: PostgresConnection) throws -> Int {
        try connection.execute("""
            DELETE FROM devices WHERE device_id IN (
                SELECT device_id FROM devices
                WHERE user_id IS NULL AND NOT countdown_ever_owned AND updated_at < now() - make_interval(secs => $1::int)
                ORDER BY updated_at LIMIT $2::int
                FOR UPDATE SKIP LOCKED)
            """, [seconds, limit])
    }
}
