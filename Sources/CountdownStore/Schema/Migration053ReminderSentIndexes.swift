extension Migration {
    /// Marking reminders `sent` costs less per row: one index entry fewer, and no trigger function call.
    ///
    /// The update cannot be HOT (a reminder's status is in the partial index of version 4), so every index of
    /// `stream_reminders` gets an entry for the new row version: the reminder fan-out's largest PostgreSQL cost per
    /// push. `stream_reminders_by_stream_and_status` answered nothing the others do not: a stream's rows by status are
    /// its primary key's range (`stream_id`, `user_id`), and its active ones the partial index's. The primary key,
    /// the partial index and `stream_reminders_by_user` (a user's reminders, and `ON DELETE CASCADE` from `users`)
    /// stay.
    ///
    /// `stream_reminders_touch` runs only when the update leaves `updated_at` as it was (what its function tests
    /// first): a writer that sets `updated_at` itself, as marking `sent` does, no longer calls a PL/pgSQL function
    /// per row. Every other writer gets `updated_at = now()` as before.
    static let reminderSentIndexes = Migration(version: 53, name: "reminders marked sent: fewer index entries, no trigger call", sql: #"""
    DROP INDEX IF EXISTS stream_reminders_by_stream_and_status;
    DROP TRIGGER stream_reminders_touch ON stream_reminders;
    CREATE TRIGGER stream_reminders_touch BEFORE UPDATE ON stream_reminders FOR EACH ROW
        WHEN (NEW.updated_at IS NOT DISTINCT FROM OLD.updated_at) EXECUTE FUNCTION countdown_touch_updated_at();
    """#)
}
