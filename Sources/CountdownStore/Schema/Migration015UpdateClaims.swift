extension Migration {
    /// One update fan-out per stream at a time (SPEC 10.1, newest state only): a registration and a reschedule can
    /// each queue the stream's `update` job while it runs, and two fan-outs sending different planned starts at once
    /// could leave a device showing the older one. A fan-out claims the stream's progress row (its own claim id,
    /// the worker that holds it for takeover when that worker dies, and an expiry) and releases it when done.
    static let updateClaims = Migration(version: 15, name: "update claims", sql: #"""
    ALTER TABLE countdown_stream_progress
        ADD COLUMN update_claim text NULL,
        ADD COLUMN update_claimed_by text NULL,
        ADD COLUMN update_claimed_until timestamptz NULL;
    """#)
}
