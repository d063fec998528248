extension Migration {
    /// The restore guard's detection (SPEC 12.4; the ledger's `assumed_sent` status is version 41's).
    ///
    /// `countdown_ledger_clock` holds PostgreSQL's newest ledger time: a statement-level trigger on the ledger moves
    /// it to the writing transaction's `now()` when it is more than 5 s behind, so it is committed (and restored,
    /// and replicated) with the ledger rows themselves. The row is taken with `SKIP LOCKED`: a ledger write never
    /// waits for another transaction holding it (the clock then lags by that transaction, a few ms). Workers copy it to
    /// Redis (`{ns}:fleet:ledger-watermark`, only ever forward) and stop claiming starts, backfills and reminders
    /// when PostgreSQL's is more than 60 s behind Redis': the database went back in time.
    static let restoreGuard = Migration(version: 71, name: "restore guard: the ledger's clock", sql: #"""
    CREATE TABLE countdown_ledger_clock (
        id     boolean PRIMARY KEY DEFAULT true CHECK (id),
        newest timestamptz NOT NULL
    );
    INSERT INTO countdown_ledger_clock (newest) VALUES (now());

    CREATE FUNCTION countdown_ledger_written() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE countdown_ledger_clock SET newest = now()
        WHERE id IN (SELECT id FROM countdown_ledger_clock WHERE newest < now() - interval '5 seconds' FOR UPDATE SKIP LOCKED);
        RETURN NULL;
    END $$;
    CREATE TRIGGER countdown_start_ledger_clock AFTER INSERT OR UPDATE ON countdown_start_ledger
        FOR EACH STATEMENT EXECUTE FUNCTION countdown_ledger_written();
    """#)
}
