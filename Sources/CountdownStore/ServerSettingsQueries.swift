import Postgres

/// Settings of the PostgreSQL server itself, read for start-up checks, and whether it answers at all.
public enum ServerSettingsQueries {
    /// Succeeds when the server answers a statement (a readiness check).
    public static func ping(on connection: PostgresConnection) throws {
        _ = try connection.query("SELECT 1")
    }

    /// `max_connections` and the slots reserved from it (`superuser_reserved_connections`, plus
    /// `reserved_connections` from PostgreSQL 16).
    public static func connectionLimits(on connection: PostgresConnection) throws -> (maxConnections: Int, reserved: Int) {
        let row = try connection.query("""
            SELECT current_setting('max_connections')::int AS max_connections,
                   current_setting('superuser_reserved_connections')::int
                     + coalesce(current_setting('reserved_connections', true)::int, 0) AS reserved
            """).first
        return (try row?.decode("max_connections", as: Int.self) ?? 0, try row?.decode("reserved", as: Int.self) ?? 0)
    }
}
