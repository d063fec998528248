extension Migration {
    /// Marking a reminder `sent` rewrites its row on its own page and touches no index (a HOT update), as settling a
    /// start-ledger row does since versions 11 and 12. The partial index of active reminders (version 4) named
    /// `status` in its predicate, so PostgreSQL could never update a reminder in place: every reminder sent added a
    /// primary-key and a `stream_reminders_by_user` entry, a new row version on another page, and their clean-up by
    /// autovacuum, the reminder fan-out's largest PostgreSQL cost per push. Without the index, and with half of each
    /// new page left free for the new versions (`fillfactor`; a fan-out sends to every reminder of a page, and the old
    /// versions become free space only once the chunk's transaction commits), a fan-out marks its reminders sent in
    /// place.
    ///
    /// Every query that used the index reads one stream's reminders, which the primary key (`stream_id`, `user_id`)
    /// finds: a stream's active reminders are its reminders with the status read from the row. Asking whether a
    /// stream has an active reminder reads its reminders in user order up to the first active one; the relay asks
    /// only while the stream's reminder is not done for its planned start (when most of its reminders are active).
    /// Only pages written from now on are affected (no rewrite; `SET (fillfactor)` takes a lock that lets reads and
    /// writes go on).
    static let reminderSentInPlace = Migration(version: 81, name: "reminders marked sent in place (no index on status)", sql: #"""
    DROP INDEX IF EXISTS stream_reminders_active;
    ALTER TABLE stream_reminders SET (fillfactor = 50);
    """#)
}
