extension Migration {
    /// Settling a start-ledger row no longer writes index entries. Both partial indexes named `status` in their
    /// predicate, so PostgreSQL could never update a row in place (a HOT update): every settled row added a
    /// primary-key entry (and its clean-up) and every recorded row two partial-index entries, most of
    /// PostgreSQL's time in a burst of starts. Without them, and with 30 % of each new page left free for the new
    /// versions (`fillfactor`), a settlement mostly rewrites the row on its own page and touches no index.
    ///
    /// Every query that used them reads one or a few streams' rows, which the primary key (`stream_id` first)
    /// finds; a worker now names the claims it gives back (`StartLedger.keepClaims`) instead of searching the ledger
    /// by owner. During a rollout, workers of the previous release still search by owner at each keep-alive: a
    /// scan of the ledger every few seconds per old worker until they are replaced.
    static let ledgerHotSettle = Migration(version: 11, name: "start ledger settles rows in place (no index on status)", sql: #"""
    DROP INDEX IF EXISTS countdown_start_ledger_open;
    DROP INDEX IF EXISTS countdown_start_ledger_claimed_by;
    ALTER TABLE countdown_start_ledger SET (fillfactor = 70);
    """#)
}
