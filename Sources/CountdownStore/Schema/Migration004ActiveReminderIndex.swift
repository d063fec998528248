extension Migration {
    /// Active reminders by stream and user, in a partial index that stays small once a fan-out has marked its
    /// reminders `sent`. Planning and reconciling ask "does this stream have active reminders?" for many
    /// streams: with only the (stream, status) index and one stream holding 100,000 sent reminders, the
    /// planner scanned the whole table for every stream it asked about. The reminder fan-out pages through it
    /// too. Built in the migration's transaction (writes to `stream_reminders` wait for it).
    static let activeReminderIndex = Migration(version: 4, name: "active reminders index", sql: #"""
    CREATE INDEX stream_reminders_active ON stream_reminders (stream_id, user_id) WHERE status = 'active';
    """#)
}
