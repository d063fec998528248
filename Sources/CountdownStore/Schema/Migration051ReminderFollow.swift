extension Migration {
    /// Reminders follow the move (SPEC 12.2): when a stream moves more than `REMINDER_LEAD_SECONDS` later after its
    /// reminder went out, the reminder is sent again before the new start, also to the users whose reminder is
    /// `sent` (it stays `sent`). `reminder_follow_for` is the planned start such a fan-out runs for: its page jobs
    /// read the sent reminders too. What was sent for which planned start is in the claims of version 50.
    static let reminderFollow = Migration(version: 51, name: "reminders follow the move", sql: #"""
    ALTER TABLE countdown_stream_progress ADD COLUMN reminder_follow_for timestamptz NULL;
    """#)
}
