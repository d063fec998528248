extension Migration {
    /// Start-ledger rows and session end claims name the worker that holds them, so a ledger claim lasts while
    /// that worker lives (it extends `claimed_until`) and both are taken over as soon as its heartbeat is gone,
    /// instead of waiting for the claim to expire. The partial index finds one worker's open rows.
    ///
    /// A move of a stream's planned start also records, in the writer's transaction, that its running activities
    /// need an update push for the new time (`update_pending_for`); the update handler clears it once sent, and the
    /// reconciler re-adds an `update` job lost with Redis while it is set.
    static let claimOwners = Migration(version: 7, name: "claim owners, pending updates", sql: #"""
    ALTER TABLE countdown_start_ledger ADD COLUMN claimed_by text NULL;
    ALTER TABLE countdown_session_end_claims ADD COLUMN claimed_by text NULL;
    CREATE INDEX countdown_start_ledger_claimed_by ON countdown_start_ledger (claimed_by) WHERE status = 'sending';

    ALTER TABLE countdown_stream_progress ADD COLUMN update_pending_for timestamptz NULL;
    CREATE FUNCTION countdown_stream_rescheduled() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO countdown_stream_progress (stream_id, update_pending_for) VALUES (NEW.id, NEW.planned_start_at)
        ON CONFLICT (stream_id) DO UPDATE SET update_pending_for = EXCLUDED.update_pending_for, updated_at = now();
        RETURN NULL;
    END
    $$;
    CREATE TRIGGER countdown_stream_rescheduled AFTER UPDATE OF planned_start_at ON streams
        FOR EACH ROW WHEN (OLD.planned_start_at IS DISTINCT FROM NEW.planned_start_at)
        EXECUTE FUNCTION countdown_stream_rescheduled();
    """#)
}
