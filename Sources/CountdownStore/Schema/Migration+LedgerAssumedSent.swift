extension Migration {
    /// The restore guard (SPEC 12.4) records the starts a database restored from a backup no longer knows as sent
    /// without a push: status `assumed_sent` (reason `restored`), never claimed, reopened or pushed
    /// (`StartLedgerMachine`). The check constraint gains the status; no row changes.
    static let ledgerAssumedSent = Migration(version: 41, name: "start ledger status assumed_sent", sql: #"""
    ALTER TABLE countdown_start_ledger DROP CONSTRAINT countdown_start_ledger_status_check;
    ALTER TABLE countdown_start_ledger ADD CONSTRAINT countdown_start_ledger_status_check
        CHECK (status IN ('pending', 'sending', 'sent', 'failed', 'skipped', 'assumed_sent'));
    """#)
}
