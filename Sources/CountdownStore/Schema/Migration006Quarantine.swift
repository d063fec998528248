extension Migration {
    /// The quarantine of rows the worker cannot read or plan, and guards for contract values that can never be
    /// right (the other contract columns already have checks: non-empty ids, enumerated statuses and roles, and
    /// foreign keys to those ids). The guards are added `NOT VALID`: the migration never fails on old rows, new writes are checked, and
    /// an old bad row reaches the quarantine when the relay or the reconciler meets it.
    static let quarantine = Migration(version: 6, name: "quarantine and row guards", sql: #"""
    CREATE TABLE countdown_quarantine (
        kind          text NOT NULL CHECK (kind IN ('stream', 'outbox')),
        key           text NOT NULL,
        found_by      text NOT NULL,
        reason        text NOT NULL,
        first_seen_at timestamptz NOT NULL DEFAULT now(),
        last_seen_at  timestamptz NOT NULL DEFAULT now(),
        seen_count    integer NOT NULL DEFAULT 1,
        PRIMARY KEY (kind, key)
    );

    ALTER TABLE streams ADD CONSTRAINT streams_planned_start_sane
        CHECK (planned_start_at >= '2000-01-01T00:00:00Z' AND planned_start_at < '2200-01-01T00:00:00Z') NOT VALID;
    """#)
}
