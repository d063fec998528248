extension Migration {
    /// Push safety (SPEC section 9). `countdown_token_invalidations`: every token the worker clears, with its old
    /// value and why, so a misconfiguration that slipped past the token guard can be undone (`countdown-admin
    /// tokens list|restore`); a runtime token's row also keeps what is needed to re-create its session.
    /// `countdown_end_attempts`: sessions whose end push failed (not for a dead token), retried until the
    /// dismissal window closes; then `countdown_undeliverable_ends` records them with the reason.
    static let pushSafety = Migration(version: 5, name: "push safety", sql: #"""
    CREATE TABLE countdown_token_invalidations (
        id             bigserial PRIMARY KEY,
        device_id      text NOT NULL,
        token_kind     text NOT NULL CHECK (token_kind IN ('fcm', 'push_to_start', 'runtime')),
        old_value      text NOT NULL CHECK (old_value <> ''),
        reason         text NOT NULL,
        stream_id      text NULL,
        user_id        text NULL,
        activity_id    text NULL,
        invalidated_at timestamptz NOT NULL DEFAULT now(),
        restored_at    timestamptz NULL,
        restore_reason text NULL
    );
    CREATE INDEX countdown_token_invalidations_by_time ON countdown_token_invalidations (invalidated_at);
    CREATE INDEX countdown_token_invalidations_by_device ON countdown_token_invalidations (device_id, token_kind, invalidated_at);

    CREATE TABLE countdown_end_attempts (
        stream_id       text NOT NULL,
        device_id       text NOT NULL,
        first_failed_at timestamptz NOT NULL DEFAULT now(),
        attempts        integer NOT NULL DEFAULT 1,
        last_reason     text NOT NULL,
        PRIMARY KEY (stream_id, device_id)
    );

    CREATE TABLE countdown_undeliverable_ends (
        id                  bigserial PRIMARY KEY,
        stream_id           text NOT NULL,
        device_id           text NOT NULL,
        live_activity_token text NOT NULL,
        reason              text NOT NULL,
        attempts            integer NOT NULL,
        first_failed_at     timestamptz NOT NULL,
        recorded_at         timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX countdown_undeliverable_ends_by_stream ON countdown_undeliverable_ends (stream_id);
    """#)
}
