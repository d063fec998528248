extension Migration {
    /// Every change of a stream's `planned_start_at` (old, new, when), written by a trigger so every writer (the
    /// existing backend, the API, countdown-admin, psql) is covered; the console's stream page shows it. Rows stay
    /// when a stream is deleted (no foreign key: writers of `streams` take no extra lock).
    static let plannedStartHistory = Migration(version: 21, name: "planned start history", sql: #"""
    CREATE TABLE countdown_planned_start_history (
        id                   bigserial PRIMARY KEY,
        stream_id            text NOT NULL,
        old_planned_start_at timestamptz NOT NULL,
        new_planned_start_at timestamptz NOT NULL,
        changed_at           timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX countdown_planned_start_history_by_stream ON countdown_planned_start_history (stream_id, changed_at, id);

    CREATE FUNCTION countdown_planned_start_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO countdown_planned_start_history (stream_id, old_planned_start_at, new_planned_start_at)
        VALUES (NEW.id, OLD.planned_start_at, NEW.planned_start_at);
        RETURN NULL;
    END $$;
    CREATE TRIGGER countdown_streams_planned_start_history AFTER UPDATE OF planned_start_at ON streams
        FOR EACH ROW WHEN (OLD.planned_start_at IS DISTINCT FROM NEW.planned_start_at)
        EXECUTE FUNCTION countdown_planned_start_changed();
    """#)
}
