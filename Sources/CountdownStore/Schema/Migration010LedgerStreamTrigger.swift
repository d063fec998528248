extension Migration {
    /// The start ledger loses its foreign key to `streams`; a statement-level trigger on `streams` removes a deleted
    /// stream's ledger rows instead, as the key's `ON DELETE CASCADE` did. The key's check ran one query per
    /// inserted ledger row (a tenth of PostgreSQL's CPU in a burst of starts), and it guarded nothing the fan-out
    /// does not already hold: every ledger insert runs in the transaction that took `FOR KEY SHARE` on its
    /// stream's row, so the stream cannot be deleted until that transaction ends, and then the trigger removes the
    /// rows. Old workers running beside new ones during a rollout insert the same way.
    static let ledgerStreamTrigger = Migration(version: 10, name: "start ledger rows removed with their stream by a trigger, not a foreign key", sql: #"""
    CREATE FUNCTION countdown_streams_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM countdown_start_ledger l USING deleted_streams d WHERE l.stream_id = d.id;
        RETURN NULL;
    END $$;
    CREATE TRIGGER streams_start_ledger_cascade AFTER DELETE ON streams
        REFERENCING OLD TABLE AS deleted_streams FOR EACH STATEMENT EXECUTE FUNCTION countdown_streams_deleted();

    CREATE FUNCTION countdown_streams_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        TRUNCATE countdown_start_ledger;
        RETURN NULL;
    END $$;
    CREATE TRIGGER streams_start_ledger_truncate AFTER TRUNCATE ON streams
        FOR EACH STATEMENT EXECUTE FUNCTION countdown_streams_truncated();

    -- By what it is, not by name: a database created by hand may have named the key differently.
    DO $$
    DECLARE key name;
    BEGIN
        FOR key IN SELECT conname FROM pg_constraint
                   WHERE conrelid = 'countdown_start_ledger'::regclass AND confrelid = 'streams'::regclass AND contype = 'f'
        LOOP
            EXECUTE format('ALTER TABLE countdown_start_ledger DROP CONSTRAINT %I', key);
        END LOOP;
    END $$;
    """#)
}
