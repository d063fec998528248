extension Migration {
    /// Tables only Countdown writes: the outbox, the start ledger, and per-stream fan-out progress.
    static let internalTables = Migration(version: 2, name: "outbox, start ledger, fan-out progress", sql: #"""
    -- Every relevant change, written by triggers in the writer's transaction; the relay turns rows into
    -- queue operations and deletes them only after Redis accepted them.
    CREATE TABLE countdown_outbox (
        id            bigserial PRIMARY KEY,
        topic         text NOT NULL CHECK (topic IN ('stream', 'participant', 'device', 'user', 'session', 'reminder')),
        stream_id     text NULL,
        user_id       text NULL,
        device_id     text NULL,
        rescheduled   boolean NOT NULL DEFAULT false,
        created_at    timestamptz NOT NULL DEFAULT now(),
        claimed_until timestamptz NULL
    );

    -- One start per (stream, user, device), ever. Rows move pending → sending → sent | failed, or are
    -- skipped with a reason; a crashed sender's rows are taken back after their claim expires.
    CREATE TABLE countdown_start_ledger (
        stream_id           text NOT NULL REFERENCES streams (id) ON DELETE CASCADE,
        user_id             text NOT NULL,
        device_id           text NOT NULL,
        status              text NOT NULL CHECK (status IN ('pending', 'sending', 'sent', 'failed', 'skipped')),
        reason              text NULL,
        attempts            integer NOT NULL DEFAULT 0,
        message_name        text NULL,
        -- md5 of the tokens the row was last addressed with: a dead-token failure reopens only for new tokens.
        token_hash          text NULL,
        claimed_until       timestamptz NULL,
        created_at          timestamptz NOT NULL DEFAULT now(),
        updated_at          timestamptz NOT NULL DEFAULT now(),
        sent_at             timestamptz NULL,
        PRIMARY KEY (stream_id, user_id, device_id)
    );
    CREATE INDEX countdown_start_ledger_open ON countdown_start_ledger (stream_id) WHERE status IN ('pending', 'sending');

    -- A runtime session whose end push is being sent, so two end jobs (the stream's and a late session's)
    -- never push to the same session at once. Rows go away with the session.
    CREATE TABLE countdown_session_end_claims (
        stream_id     text NOT NULL,
        device_id     text NOT NULL,
        claimed_until timestamptz NOT NULL,
        PRIMARY KEY (stream_id, device_id),
        FOREIGN KEY (stream_id, device_id) REFERENCES live_activity_sessions (stream_id, device_id) ON DELETE CASCADE
    );

    -- For which planned start the start and reminder fan-outs completed, so the reconciler knows what is left.
    CREATE TABLE countdown_stream_progress (
        stream_id          text PRIMARY KEY REFERENCES streams (id) ON DELETE CASCADE,
        start_done_for     timestamptz NULL,
        reminder_done_for  timestamptz NULL,
        updated_at         timestamptz NOT NULL DEFAULT now()
    );
    """#)
}
