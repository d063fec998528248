extension Migration {
    /// Per-device reminder records (SPEC 10.1: a crash repeats at most the pushes in flight). A reminder fan-out
    /// claims a chunk's devices (`sending`, with the worker and an expiry) before it sends, marks each device `sent`
    /// as its answer arrives, and drops the claim of a device whose push must be retried. A retry skips `sent`
    /// devices and sends again only to claims of a dead worker (or expired ones): the pushes that worker had out.
    /// Keyed by stream and device, whatever the platform.
    static let reminderDeliveries = Migration(version: 16, name: "reminder deliveries", sql: #"""
    CREATE TABLE countdown_reminder_deliveries (
        stream_id     text NOT NULL REFERENCES streams (id) ON DELETE CASCADE,
        device_id     text NOT NULL,
        user_id       text NOT NULL,
        status        text NOT NULL CHECK (status IN ('sending', 'sent')),
        claimed_by    text NULL,
        claimed_until timestamptz NULL,
        sent_at       timestamptz NULL,
        PRIMARY KEY (stream_id, device_id)
    );
    """#)
}
