import CountdownDomain
import Foundation
import Postgres

/// The SQL of broadcast channels (`countdown_broadcast_channels`, `countdown_broadcast_orphans`) and of the iOS
/// version devices reported (`countdown_device_os`). Creation at Apple is not idempotent: the intent is recorded
/// first and one caller at a time holds it (`claim`), so a stream uses one channel whatever the workers do.
public enum BroadcastChannels {
    static let columns = "id, stream_id, state, channel_id, attempts, last_error, used_at, shown_start_at, ended_at, delete_after"

    /// True when the stream `s` has a channel in use (a start went on it, no end yet): its activities registered no
    /// session, so this stands for them where the planner asks whether a stream has sessions. Uses the one-per-stream index.
    static let inUseCondition = "(SELECT true FROM countdown_broadcast_channels c WHERE c.stream_id = s.id AND c.state = 'in_use' LIMIT 1)"

    /// States whose rows count against `APNS_BROADCAST_MAX_CHANNELS`: every one that has, or may have, a channel at Apple.
    static let alive = "('intent', 'created', 'in_use', 'deleting')"

    /// The stream's channel, or the right to create it. In one transaction: the stream's current row (locked), else
    /// a new intent when fewer than `maxAlive` channels are alive. An intent whose holder let go (its retry is due) or
    /// went quiet for `holdSeconds` (it crashed or hangs: what it created, if anything, becomes an orphan) is taken over;
    /// one held by a caller still within `holdSeconds` is `held` (its answer is due soon), one whose retry is not due `waiting`.
    public static func claim(stream: String, claim: String, maxAlive: Int, holdSeconds: Int, on connection: PostgresConnection) throws -> ChannelClaim {
        let rows = try connection.query("""
            SELECT \(columns), claim IS NOT NULL AS held FROM countdown_broadcast_channels
            WHERE stream_id = $1 AND state IN ('intent', 'created', 'in_use', 'failed') FOR UPDATE
            """, [stream])
        if let current = try decode(rows).first {
            switch current.state {
            case .created, .inUse: return .ready(current)
            case .failed: return .failed
            case .deleting: return .waiting
            case .intent:
                let taken = try connection.query("""
                    UPDATE countdown_broadcast_channels SET claim = $2, intent_at = now()
                    WHERE id = $1 AND state = 'intent'
                      AND ((claim IS NULL AND next_attempt_at <= now()) OR (claim IS NOT NULL AND intent_at < now() - make_interval(secs => $3)))
                    RETURNING attempts
                    """, [current.row, claim, holdSeconds])
                guard let attempts = try taken.first?.decode("attempts", as: Int.self) else {
                    return try rows.first?.decode("held", as: Bool.self) == true ? .held : .waiting
                }
                return .create(row: current.row, claim: claim, attempt: attempts + 1)
            }
        }
        let inserted = try connection.query("""
            INSERT INTO countdown_broadcast_channels (stream_id, state, claim)
            SELECT $1, 'intent', $2 WHERE (SELECT count(*) FROM countdown_broadcast_channels WHERE state IN \(alive)) < $3
            ON CONFLICT (stream_id) WHERE state IN ('intent', 'created', 'in_use', 'failed') DO NOTHING
            RETURNING id
            """, [stream, claim, maxAlive])
        if let row = try inserted.first?.decode("id", as: Int64.self) { return .create(row: row, claim: claim, attempt: 1) }
        let raced = try connection.query("""
            SELECT 1 FROM countdown_broadcast_channels WHERE stream_id = $1 AND state IN ('intent', 'created', 'in_use', 'failed')
            """, [stream])
        return raced.isEmpty ? .atCapacity : .held
    }

    /// Records the id Apple answered for the intent `row` held by `claim`. False when the intent was taken over or
    /// dropped meanwhile: the caller deletes the channel it created (nobody will use it).
    public static func recordCreated(row: Int64, claim: String, channelID: String, on connection: PostgresConnection) throws -> Bool {
        try connection.execute("""
            UPDATE countdown_broadcast_channels SET state = 'created', channel_id = $3, created_at = now(), claim = NULL, last_error = NULL
            WHERE id = $1 AND claim = $2 AND state = 'intent'
            """, [row, claim, channelID]) == 1
    }

    /// Records a failed attempt of the intent `row`: the next one is due after `retryAfterSeconds`, or, with `giveUp`,
    /// none (`failed`: the stream stays on token pushes).
    public static func recordFailure(row: Int64, claim: String, error: String, retryAfterSeconds: Double, giveUp: Bool,
                                     on connection: PostgresConnection) throws {
        try connection.execute("""
            UPDATE countdown_broadcast_channels
            SET state = CASE WHEN $5 THEN 'failed' ELSE 'intent' END, claim = NULL, attempts = attempts + 1, last_error = $3,
                next_attempt_at = now() + make_interval(secs => $4)
            WHERE id = $1 AND claim = $2 AND state = 'intent'
            """, [row, claim, String(error.prefix(500)), retryAfterSeconds, giveUp])
    }

    /// The stream's usable channel (created, not ended), if any.
    public static func usable(stream: String, on connection: PostgresConnection) throws -> BroadcastChannel? {
        try decode(connection.query("""
            SELECT \(columns) FROM countdown_broadcast_channels
            WHERE stream_id = $1 AND state IN ('created', 'in_use') AND channel_id IS NOT NULL
            """, [stream])).first
    }

    /// The latest planned start the channel's activities may show: the last one a push on it carried, or a planned
    /// start the stream (planned to start at `current` now) had since a start first carried the channel (`used_at`,
    /// less the time a start takes to build; `PlannedStartTimeline.latest`): an activity whose phone missed the update
    /// moving the start earlier still shows the later one. Nil for a channel no push carried.
    public static func latestStart(_ channel: BroadcastChannel, current: Date, on connection: PostgresConnection) throws -> Date? {
        guard let usedAt = channel.usedAt else { return channel.shownStartAt }
        let timeline = try PlannedStartHistoryQueries.timeline(channel.stream, current: current, on: connection)
        let latest = timeline.latest(since: usedAt.addingTimeInterval(-SessionUpdatePolicy.startBuildMargin))
        return [channel.shownStartAt, latest].compactMap { $0 }.max()
    }

    /// Every row of the stream, newest first (the console's stream page).
    public static func all(stream: String, on connection: PostgresConnection) throws -> [BroadcastChannel] {
        try decode(connection.query("SELECT \(columns) FROM countdown_broadcast_channels WHERE stream_id = $1 ORDER BY id DESC", [stream]))
    }

    /// A push carrying the channel went out (a start, or a broadcast showing `shown`): `in_use`, and what its
    /// activities show. A start keeps an earlier broadcast's `shown`; a broadcast replaces it.
    public static func markUsed(channelID: String, shown: Date, replacing: Bool, on connection: PostgresConnection) throws {
        try connection.execute("""
            UPDATE countdown_broadcast_channels
            SET state = 'in_use', used_at = coalesce(used_at, now()),
                shown_start_at = CASE WHEN $3 OR shown_start_at IS NULL THEN $2 ELSE shown_start_at END
            WHERE channel_id = $1 AND state IN ('created', 'in_use')
            """, [channelID, shown, replacing])
    }

    /// The channel is done (its end broadcast was accepted, it was replaced after a long move, or Apple no longer
    /// knows it): deleted at Apple after `deleteAfterSeconds`.
    public static func retire(channelID: String, ended: Bool, deleteAfterSeconds: Double, on connection: PostgresConnection) throws {
        try connection.execute("""
            UPDATE countdown_broadcast_channels
            SET state = 'deleting', ended_at = CASE WHEN $2 THEN now() ELSE ended_at END,
                delete_after = now() + make_interval(secs => $3)
            WHERE channel_id = $1 AND state IN ('created', 'in_use')
            """, [channelID, ended, deleteAfterSeconds])
    }

    /// Channels whose stream left `scheduled` more than `graceSeconds` ago (or is gone) and that no end retired:
    /// retired now, so they are deleted too. Returns how many.
    public static func retireAbandoned(graceSeconds: Double, on connection: PostgresConnection) throws -> Int {
        try connection.execute("""
            UPDATE countdown_broadcast_channels c SET state = 'deleting', delete_after = now()
            WHERE c.state IN ('created', 'in_use')
              AND NOT EXISTS (SELECT 1 FROM streams s WHERE s.id = c.stream_id AND s.status = 'scheduled')
              AND NOT EXISTS (SELECT 1 FROM countdown_stream_ends e WHERE e.stream_id = c.stream_id
                              AND e.left_scheduled_at > now() - make_interval(secs => $1))
            """, [graceSeconds])
    }

    /// Intents and failures of streams that are no longer scheduled: nothing will use them. Returns how many went.
    public static func dropUnneeded(on connection: PostgresConnection) throws -> Int {
        try connection.execute("""
            DELETE FROM countdown_broadcast_channels c
            WHERE c.state IN ('intent', 'failed') AND c.channel_id IS NULL AND (c.claim IS NULL OR c.intent_at < now() - interval '10 minutes')
              AND NOT EXISTS (SELECT 1 FROM streams s WHERE s.id = c.stream_id AND s.status = 'scheduled')
            """)
    }

    /// Streams of scheduled streams whose channel intent is due again (a failed attempt's backoff passed, or its
    /// holder went quiet for `holdSeconds`), oldest first.
    public static func intentsDue(holdSeconds: Int, limit: Int, on connection: PostgresConnection) throws -> [String] {
        try connection.query("""
            SELECT c.stream_id FROM countdown_broadcast_channels c JOIN streams s ON s.id = c.stream_id AND s.status = 'scheduled'
            WHERE c.state = 'intent'
              AND ((c.claim IS NULL AND c.next_attempt_at <= now()) OR (c.claim IS NOT NULL AND c.intent_at < now() - make_interval(secs => $1)))
            ORDER BY c.next_attempt_at LIMIT $2
            """, [holdSeconds, limit]).map { try $0.decode("stream_id", as: String.self) }
    }

    /// Channel ids due for deletion at Apple.
    public static func dueForDeletion(limit: Int, on connection: PostgresConnection) throws -> [String] {
        try connection.query("""
            SELECT channel_id FROM countdown_broadcast_channels
            WHERE state = 'deleting' AND delete_after <= now() AND channel_id IS NOT NULL ORDER BY delete_after LIMIT $1
            """, [limit]).map { try $0.decode("channel_id", as: String.self) }
    }

    /// Apple deleted the channel (or no longer knew it): its row goes.
    public static func forget(channelID: String, on connection: PostgresConnection) throws {
        try connection.execute("DELETE FROM countdown_broadcast_channels WHERE channel_id = $1 AND state = 'deleting'", [channelID])
    }

    /// Given every channel Apple lists, the orphans to delete now: listed, named by no row, and first seen unnamed at
    /// least `graceSeconds` ago (a channel whose creator is still recording it is named within seconds). Channels
    /// no longer listed or named since are forgotten. Run in one transaction, before the orphans are deleted at Apple:
    /// a creator quiet for the grace period first loses its claim, so if an orphan is its channel, its record (which
    /// needs the claim) fails from then on rather than name a channel being deleted. The intent's row lock orders this
    /// with a record under way, which then names its channel before the check below reads it.
    public static func orphans(listed: [String], graceSeconds: Double, on connection: PostgresConnection) throws -> [String] {
        try connection.execute("""
            UPDATE countdown_broadcast_channels SET claim = NULL
            WHERE state = 'intent' AND claim IS NOT NULL AND intent_at <= now() - make_interval(secs => $1)
            """, [graceSeconds])
        let unnamed = try connection.query("""
            SELECT l FROM unnest($1::text[]) AS t(l) WHERE NOT EXISTS (SELECT 1 FROM countdown_broadcast_channels c WHERE c.channel_id = t.l)
            """, [PostgresTextArray(listed)]).map { try $0.decode("l", as: String.self) }
        try connection.execute("DELETE FROM countdown_broadcast_orphans WHERE NOT (channel_id = ANY($1::text[]))", [PostgresTextArray(unnamed)])
        return try connection.query("""
            WITH noted AS (
                INSERT INTO countdown_broadcast_orphans (channel_id) SELECT u FROM unnest($1::text[]) AS t(u) ON CONFLICT (channel_id) DO NOTHING
            )
            SELECT channel_id FROM countdown_broadcast_orphans
            WHERE channel_id = ANY($1::text[]) AND first_seen_at <= now() - make_interval(secs => $2)
            """, [PostgresTextArray(unnamed), graceSeconds]).map { try $0.decode("channel_id", as: String.self) }
    }

    /// An orphan was deleted at Apple.
    public static func forgetOrphan(channelID: String, on connection: PostgresConnection) throws {
        try connection.execute("DELETE FROM countdown_broadcast_orphans WHERE channel_id = $1", [channelID])
    }

    /// Channels alive (counted against `APNS_BROADCAST_MAX_CHANNELS`).
    public static func aliveCount(on connection: PostgresConnection) throws -> Int {
        try connection.query("SELECT count(*)::int AS n FROM countdown_broadcast_channels WHERE state IN \(alive)").first?.decode("n", as: Int.self) ?? 0
    }

    /// Of `devices`, those whose app last reported iOS `minMajor` or later.
    public static func devices(_ devices: [String], reportingAtLeast minMajor: Int, on connection: PostgresConnection) throws -> Set<String> {
        guard !devices.isEmpty else { return [] }
        return Set(try connection.query("""
            SELECT device_id FROM countdown_device_os WHERE device_id = ANY($1::text[]) AND major >= $2
            """, [PostgresTextArray(devices), minMajor]).map { try $0.decode("device_id", as: String.self) })
    }

    /// Records the OS version a device's app reported (`osVersion`, with its major version).
    public static func recordOSVersion(device: String, version: String, major: Int, on connection: PostgresConnection) throws {
        try connection.execute("""
            INSERT INTO countdown_device_os (device_id, os_version, major) VALUES ($1, $2, $3)
            ON CONFLICT (device_id) DO UPDATE SET os_version = EXCLUDED.os_version, major = EXCLUDED.major, updated_at = now()
            WHERE countdown_device_os.os_version IS DISTINCT FROM EXCLUDED.os_version
            """, [device, version, major])
    }

    static func decode(_ rows: PostgresRows) throws -> [BroadcastChannel] {
        try rows.map { row in
            BroadcastChannel(row: try row.decode("id"), stream: try row.decode("stream_id"),
                             state: BroadcastChannel.State(rawValue: try row.decode("state")) ?? .failed,
                             channelID: try row.decode("channel_id"), attempts: try row.decode("attempts"), lastError: try row.decode("last_error"),
                             usedAt: try row.decode("used_at"), shownStartAt: try row.decode("shown_start_at"), endedAt: try row.decode("ended_at"),
                             deleteAfter: try row.decode("delete_after"))
        }
    }
}
