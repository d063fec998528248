extension Migration {
    /// Reminder delivery records at a tenth of the cost (SPEC 10.1: a crash repeats at most the pushes in flight).
    /// Version 16 wrote a row per device twice: claimed (`sending`) before the push, then updated to `sent` with
    /// its answer, an insert and an update per device. Now a fan-out claims a chunk's range of users in one row
    /// (`countdown_reminder_claims`: the worker, until when, and the planned start it sends for), and records the
    /// devices that took the reminder in one row per answered batch (`countdown_reminder_sends`: an array of device
    /// ids), written as the batch's answers arrive. A chunk overlapping a live claim of a live worker waits; one
    /// overlapping a claim of a dead worker (or an expired one) takes it over and skips the devices its sends
    /// record: what is repeated is what the dead worker had out and not recorded. The claim is released when the
    /// chunk's users are marked sent. Version 16's table is left as it was (no longer written).
    static let reminderClaims = Migration(version: 50, name: "reminder claims by range, sends by batch", sql: #"""
    CREATE TABLE countdown_reminder_claims (
        id            bigserial PRIMARY KEY,
        stream_id     text NOT NULL REFERENCES streams (id) ON DELETE CASCADE,
        planned_start timestamptz NOT NULL,
        first_user    text NOT NULL,
        last_user     text NOT NULL,
        claimed_by    text NULL,
        claimed_until timestamptz NOT NULL,
        created_at    timestamptz NOT NULL DEFAULT now(),
        CHECK (first_user <= last_user)
    );
    CREATE INDEX countdown_reminder_claims_by_stream ON countdown_reminder_claims (stream_id, first_user);

    CREATE TABLE countdown_reminder_sends (
        claim_id  bigint NOT NULL REFERENCES countdown_reminder_claims (id) ON DELETE CASCADE,
        stream_id text NOT NULL,
        devices   text[] NOT NULL,
        sent_at   timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX countdown_reminder_sends_by_claim ON countdown_reminder_sends (claim_id);
    """#)
}
