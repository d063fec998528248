extension Migration {
    /// The Android countdown (SPEC 10.4): the start ledger is the Android session list. A ledger row of an Android
    /// device whose start was accepted (`sent`) is a countdown showing on that device until an end is accepted
    /// (`android_ended_at`). `android_seq` is the `seq` of the last message sent there after the start (the start
    /// is `seq` 1; 0 means only the start was sent), taken before the push so a resend after a crash is never
    /// above a newer message. `android_accepted_start` is the planned start the device last accepted in an update
    /// (the update priority's rule; an update's retry skips devices that already show the current start).
    /// `android_claimed_*` keep two jobs from sending the same device an update or end at once.
    static let androidCountdown = Migration(version: 40, name: "android countdown", sql: #"""
    ALTER TABLE countdown_start_ledger
        ADD COLUMN android_seq            integer NOT NULL DEFAULT 0,
        ADD COLUMN android_accepted_start timestamptz NULL,
        ADD COLUMN android_ended_at       timestamptz NULL,
        ADD COLUMN android_end_reason     text NULL,
        ADD COLUMN android_claimed_until  timestamptz NULL,
        ADD COLUMN android_claimed_by     text NULL;
    """#)
}
