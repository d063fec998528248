extension Migration {
    /// One start per activity lifetime (SPEC 10.1, round 3): iOS ends a Live Activity 8 hours after it started, so
    /// when a stream's planned start moves more than 8 hours past a device's push-to-start, its ledger row is opened
    /// again for a new push-to-start. `generation` counts the activities a row has started (the row of a
    /// (stream, user, device) holds its current one, and a row is reopened only by raising it): one start per
    /// generation. A column with a constant default: no table rewrite, nothing to backfill.
    static let ledgerGeneration = Migration(version: 17, name: "start ledger generation", sql: #"""
    ALTER TABLE countdown_start_ledger ADD COLUMN generation integer NOT NULL DEFAULT 1;
    """#)
}
