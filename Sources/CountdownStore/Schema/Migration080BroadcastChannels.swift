extension Migration {
    /// Broadcast channels (SPEC 12.5, `APNS_BROADCAST=on`) and the iOS version each device's app reported.
    ///
    /// `countdown_broadcast_channels` has a row per channel a stream used or meant to use. Creation at Apple is not
    /// idempotent, so the intent is recorded first (`intent`, with the `claim` of the one worker asking Apple), then
    /// the id Apple answered (`created`), then its first push (`in_use`); after the stream's end, or a long move, the
    /// row waits for its `delete_after` (`deleting`) and goes once Apple deleted the channel. A stream whose channel
    /// could not be created after its attempts stays on token pushes (`failed`). The partial unique index keeps one
    /// channel in use per stream whatever the workers do; `countdown_broadcast_orphans` remembers channels Apple
    /// listed that no row names, first seen when, so one still being recorded is not deleted under its creator.
    static let broadcastChannels = Migration(version: 80, name: "broadcast channels and device OS versions", sql: #"""
    CREATE TABLE countdown_broadcast_channels (
        id              bigserial PRIMARY KEY,
        stream_id       text NOT NULL,
        state           text NOT NULL CHECK (state IN ('intent', 'created', 'in_use', 'deleting', 'failed')),
        channel_id      text NULL UNIQUE,
        claim           text NULL,
        intent_at       timestamptz NOT NULL DEFAULT now(),
        created_at      timestamptz NULL,
        attempts        integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        last_error      text NULL,
        used_at         timestamptz NULL,
        shown_start_at  timestamptz NULL,
        ended_at        timestamptz NULL,
        delete_after    timestamptz NULL
    );
    CREATE UNIQUE INDEX countdown_broadcast_channels_one_per_stream ON countdown_broadcast_channels (stream_id)
        WHERE state IN ('intent', 'created', 'in_use', 'failed');
    CREATE INDEX countdown_broadcast_channels_deleting ON countdown_broadcast_channels (delete_after) WHERE state = 'deleting';

    CREATE TABLE countdown_broadcast_orphans (
        channel_id    text PRIMARY KEY,
        first_seen_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE countdown_device_os (
        device_id  text PRIMARY KEY REFERENCES devices (device_id) ON DELETE CASCADE,
        os_version text NOT NULL,
        major      integer NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
    );
    """#)
}
