extension Migration {
    /// Per-session delivery records (SPEC 10.1): which planned start each running countdown last accepted, so an
    /// update goes only to the sessions that do not show the current start, a retry resends only to those whose
    /// update was not accepted, and the priority can tell a later start from an earlier one. Keyed by stream, device
    /// and channel (`live_activity`: an iOS runtime session; `android_countdown`: an Android device's countdown), with
    /// the token the state was accepted at and a per-device sequence number.
    ///
    /// `planned_changed_at` records when a stream's planned start last moved (in the writer's transaction, by the
    /// trigger of migration 7, replaced here), so a session registered later can tell whether the push-to-start that
    /// created its activity carried the current start.
    static let sessionDeliveries = Migration(version: 14, name: "session delivery records", sql: #"""
    CREATE TABLE countdown_session_deliveries (
        stream_id      text NOT NULL REFERENCES streams (id) ON DELETE CASCADE,
        device_id      text NOT NULL,
        channel        text NOT NULL CHECK (channel IN ('live_activity', 'android_countdown')),
        token          text NOT NULL,
        shown_start_at timestamptz NOT NULL,
        accepted_at    timestamptz NOT NULL DEFAULT now(),
        seq            bigint NOT NULL DEFAULT 1,
        PRIMARY KEY (stream_id, device_id, channel)
    );

    ALTER TABLE countdown_stream_progress ADD COLUMN planned_changed_at timestamptz NULL;
    CREATE OR REPLACE FUNCTION countdown_stream_rescheduled() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO countdown_stream_progress (stream_id, update_pending_for, planned_changed_at) VALUES (NEW.id, NEW.planned_start_at, now())
        ON CONFLICT (stream_id) DO UPDATE SET update_pending_for = EXCLUDED.update_pending_for,
            planned_changed_at = EXCLUDED.planned_changed_at, updated_at = now();
        RETURN NULL;
    END
    $$;
    """#)
}
