extension Migration {
    /// Every token the worker clears, with its old value and why, so a misconfiguration that slipped past the
    /// token guard can be undone (`countdown-admin tokens list|restore`). A runtime token's row also keeps what
    /// is needed to re-create its session.
    static let tokenInvalidations = Migration(version: 5, name: "token invalidations", sql: #"""
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
    """#)
}
