extension Migration {
    /// Runtime sessions retired by a device takeover (an authenticated login of another user on the device):
    /// the API moves the previous user's sessions of streams that have not ended out of `live_activity_sessions`
    /// into `countdown_retired_sessions` in the takeover's transaction, and the worker sends each one an end push
    /// that dismisses the activity at once, deleting the row once it was accepted or its token is dead (failures
    /// are retried with backoff, then recorded in `countdown_undeliverable_ends`). Each retired row writes an
    /// outbox row (topic `retired`); an older relay reads an unknown topic as a stream change, which is harmless.
    static let retiredSessions = Migration(version: 8, name: "sessions retired by a device takeover", sql: #"""
    CREATE TABLE countdown_retired_sessions (
        stream_id           text NOT NULL,
        device_id           text NOT NULL,
        live_activity_token text NOT NULL,
        user_id             text NULL,
        reason              text NOT NULL,
        retired_at          timestamptz NOT NULL DEFAULT now(),
        attempts            integer NOT NULL DEFAULT 0,
        first_failed_at     timestamptz NULL,
        last_reason         text NULL,
        claimed_until       timestamptz NULL,
        claimed_by          text NULL,
        PRIMARY KEY (stream_id, device_id, live_activity_token)
    );

    ALTER TABLE countdown_outbox DROP CONSTRAINT countdown_outbox_topic_check;
    ALTER TABLE countdown_outbox ADD CONSTRAINT countdown_outbox_topic_check
        CHECK (topic IN ('stream', 'participant', 'device', 'user', 'session', 'reminder', 'retired'));

    CREATE FUNCTION countdown_session_retired() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM countdown_outbox_write('retired', NEW.stream_id, NEW.user_id, NEW.device_id, false);
        RETURN NULL;
    END $$;
    CREATE TRIGGER countdown_retired_sessions_outbox AFTER INSERT ON countdown_retired_sessions
        FOR EACH ROW EXECUTE FUNCTION countdown_session_retired();
    """#)
}
