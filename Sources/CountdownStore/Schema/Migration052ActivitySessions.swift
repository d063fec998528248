extension Migration {
    /// Sessions per activity (SPEC 12.1). `live_activity_sessions` keeps its key (stream, device) and the newest
    /// activity; an older activity of the same device and stream (registered with another `activity_id`) is kept in
    /// `countdown_activity_sessions`, so it gets the updates and the end too. The end attempts and the update
    /// delivery records are kept per activity (`activity_id`, '' for a session registered without one), so an end
    /// or update accepted for one activity does not count for another. Existing records take the activity of their
    /// device's session.
    static let activitySessions = Migration(version: 52, name: "sessions per activity", sql: #"""
    CREATE TABLE countdown_activity_sessions (
        stream_id           text NOT NULL REFERENCES streams (id) ON DELETE CASCADE,
        device_id           text NOT NULL REFERENCES devices (device_id) ON DELETE CASCADE,
        activity_id         text NOT NULL CHECK (activity_id <> ''),
        user_id             text NULL REFERENCES users (id) ON DELETE SET NULL,
        live_activity_token text NOT NULL CHECK (live_activity_token <> ''),
        created_at          timestamptz NOT NULL DEFAULT now(),
        updated_at          timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (stream_id, device_id, activity_id)
    );
    CREATE INDEX countdown_activity_sessions_by_device ON countdown_activity_sessions (device_id);
    CREATE TRIGGER countdown_activity_sessions_touch BEFORE UPDATE ON countdown_activity_sessions
        FOR EACH ROW EXECUTE FUNCTION countdown_touch_updated_at();

    ALTER TABLE countdown_end_attempts ADD COLUMN activity_id text NOT NULL DEFAULT '';
    UPDATE countdown_end_attempts a SET activity_id = s.activity_id FROM live_activity_sessions s
    WHERE s.stream_id = a.stream_id AND s.device_id = a.device_id AND coalesce(s.activity_id, '') <> '';
    ALTER TABLE countdown_end_attempts DROP CONSTRAINT countdown_end_attempts_pkey,
        ADD PRIMARY KEY (stream_id, device_id, activity_id);

    ALTER TABLE countdown_session_deliveries ADD COLUMN activity_id text NOT NULL DEFAULT '';
    UPDATE countdown_session_deliveries d SET activity_id = s.activity_id FROM live_activity_sessions s
    WHERE d.channel = 'live_activity' AND s.stream_id = d.stream_id AND s.device_id = d.device_id AND coalesce(s.activity_id, '') <> '';
    ALTER TABLE countdown_session_deliveries DROP CONSTRAINT countdown_session_deliveries_pkey,
        ADD PRIMARY KEY (stream_id, device_id, channel, activity_id);
    """#)
}
