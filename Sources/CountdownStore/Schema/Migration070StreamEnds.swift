extension Migration {
    /// When each stream first left `scheduled` (SPEC 12.3: its rows go `RETENTION_DAYS` later), written by triggers on
    /// `streams` in the writer's transaction, so every writer (the backend, the API, countdown-admin, psql) is covered.
    /// A row keeps the first time until the pruner deletes it with the stream's other rows (`RetentionQueries`), or the
    /// foreign key with the stream; a stream that leaves `scheduled` again after that gets a new row. `pruned_at` is no
    /// longer written (an earlier pruner marked pruned rows instead of deleting them; such rows are skipped, and the
    /// trigger clears the mark when the stream changes status again). The partial index holds the rows still to prune.
    ///
    /// Streams that had already left `scheduled` get the later of their `updated_at` and planned start, at most now
    /// (a stream leaves `scheduled` around its start unless cancelled before: the estimate is never early by more than
    /// the writer's `updated_at` is). One pass over `streams`, in the migration's transaction.
    ///
    /// Also an index on the audit's time, so the pruner finds rows older than `AUDIT_RETENTION_DAYS` without a scan.
    static let streamEnds = Migration(version: 70, name: "when streams left scheduled (retention)", sql: #"""
    CREATE TABLE countdown_stream_ends (
        stream_id         text PRIMARY KEY REFERENCES streams (id) ON DELETE CASCADE,
        left_scheduled_at timestamptz NOT NULL DEFAULT now(),
        pruned_at         timestamptz NULL
    );
    CREATE INDEX countdown_stream_ends_unpruned ON countdown_stream_ends (left_scheduled_at) WHERE pruned_at IS NULL;

    INSERT INTO countdown_stream_ends (stream_id, left_scheduled_at)
    SELECT id, least(now(), greatest(updated_at, planned_start_at)) FROM streams WHERE status <> 'scheduled';

    CREATE FUNCTION countdown_stream_left_scheduled() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO countdown_stream_ends (stream_id) VALUES (NEW.id)
        ON CONFLICT (stream_id) DO UPDATE SET pruned_at = NULL WHERE countdown_stream_ends.pruned_at IS NOT NULL;
        RETURN NULL;
    END $$;
    CREATE TRIGGER streams_left_scheduled AFTER INSERT ON streams
        FOR EACH ROW WHEN (NEW.status <> 'scheduled') EXECUTE FUNCTION countdown_stream_left_scheduled();
    CREATE TRIGGER streams_left_scheduled_update AFTER UPDATE OF status ON streams
        FOR EACH ROW WHEN (NEW.status <> 'scheduled' AND OLD.status IS DISTINCT FROM NEW.status)
        EXECUTE FUNCTION countdown_stream_left_scheduled();

    CREATE INDEX countdown_audit_by_time ON countdown_audit (at);
    """#)
}
