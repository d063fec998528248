extension Migration {
    /// The pause state of each job kind (SPEC 10.3): PostgreSQL holds the truth, every worker mirrors it into the
    /// queue's Redis pause keys (which stay the claim-time check), so a Redis that lost its data, a failover or a
    /// reconcile never resumes on its own. A row is written by `pause` and `resume` alike (who, why, since when);
    /// a kind without a row was never paused or resumed through PostgreSQL, and the mirror leaves its Redis state alone.
    static let pauseState = Migration(version: 13, name: "pause state", sql: #"""
    CREATE TABLE countdown_pause (
        kind   text PRIMARY KEY CHECK (kind <> ''),
        paused boolean NOT NULL,
        actor  text NOT NULL,
        reason text NOT NULL DEFAULT '',
        since  timestamptz NOT NULL DEFAULT now()
    );
    """#)
}
