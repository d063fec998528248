extension Migration {
    /// Start-ledger rows and session end claims name the worker that holds them, so a claim lasts while that
    /// worker lives (it extends `claimed_until`) and is taken over as soon as its heartbeat is gone, instead of
    /// waiting for the claim to expire. The partial index finds one worker's open rows for the extension.
    static let claimOwners = Migration(version: 7, name: "claim owners", sql: #"""
    ALTER TABLE countdown_start_ledger ADD COLUMN claimed_by text NULL;
    ALTER TABLE countdown_session_end_claims ADD COLUMN claimed_by text NULL;
    CREATE INDEX countdown_start_ledger_claimed_by ON countdown_start_ledger (claimed_by) WHERE status = 'sending';
    CREATE INDEX countdown_session_end_claims_claimed_by ON countdown_session_end_claims (claimed_by);
    """#)
}
