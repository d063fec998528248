extension Migration {
    /// The restore guard (SPEC 12.4) records the starts a database restored from a backup no longer knows as sent
    /// without a push: status `assumed_sent` (reason `restored`), never claimed, reopened or pushed
    /// (`StartLedgerMachine`). The check constraint gains the status; no row changes. Every existing row met the
    /// narrower constraint it replaces, so the new one is added `NOT VALID`: it holds for every write from now on,
    /// and the ledger is not scanned under the migration's exclusive lock.
    static let ledgerAssumedSent = Migration(version: 41, name: "start ledger status assumed_sent", sql: #"""
    ALTER TABLE countdown_start_ledger DROP CONSTRAINT countdown_start_ledger_status_check;
    ALTER TABLE countdown_start_ledger ADD CONSTRAINT countdown_start_ledger_status_check
        CHECK (status IN ('pending', 'sending', 'sent', 'failed', 'skipped', 'assumed_sent')) NOT VALID;
    """#)
}
