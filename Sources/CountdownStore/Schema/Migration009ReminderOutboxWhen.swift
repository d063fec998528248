extension Migration {
    /// The `stream_reminders` outbox trigger fires only when a reminder becomes `active`, the one change it records
    /// (version 3's function writes nothing otherwise). It used to run for every row written, so marking a million
    /// reminders `sent` queued a million after-trigger events and a million PL/pgSQL calls that wrote nothing. The
    /// conditions move into `WHEN` clauses, which PostgreSQL checks before it queues the event; the outbox rows
    /// written, and so what the relay plans, are exactly those of version 3.
    static let reminderOutboxWhen = Migration(version: 9, name: "reminder outbox trigger only when a reminder becomes active", sql: #"""
    DROP TRIGGER stream_reminders_outbox ON stream_reminders;
    CREATE TRIGGER stream_reminders_outbox AFTER INSERT ON stream_reminders
        FOR EACH ROW WHEN (NEW.status = 'active') EXECUTE FUNCTION countdown_reminders_changed();
    CREATE TRIGGER stream_reminders_outbox_reactivated AFTER UPDATE ON stream_reminders
        FOR EACH ROW WHEN (NEW.status = 'active' AND OLD.status IS DISTINCT FROM 'active')
        EXECUTE FUNCTION countdown_reminders_changed();
    """#)
}
