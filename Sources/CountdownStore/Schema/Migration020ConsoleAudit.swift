extension Migration {
    /// The operator console's audit trail (SPEC 11): every action, allowed or refused, from `countdown-console` and
    /// `countdown-admin`, newest first by id. Also an index that lets the console's device page read a device's
    /// start-ledger rows and the user page a user's reminders without scanning (`device_id` and `user_id` never change,
    /// so settlements stay HOT updates).
    static let consoleAudit = Migration(version: 20, name: "console audit trail, start ledger by device", sql: #"""
    CREATE TABLE countdown_audit (
        id      bigserial PRIMARY KEY,
        at      timestamptz NOT NULL DEFAULT now(),
        actor   text NOT NULL,
        role    text NOT NULL,
        action  text NOT NULL,
        target  text NOT NULL DEFAULT '',
        reason  text NOT NULL DEFAULT '',
        outcome text NOT NULL
    );
    CREATE INDEX countdown_start_ledger_by_device ON countdown_start_ledger (device_id);
    CREATE INDEX stream_reminders_by_user ON stream_reminders (user_id);
    """#)
}
