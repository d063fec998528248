/// One reading of a `Soak`: what the system holds at that moment (tables, Redis, workers' memory) and what happened
/// since the previous reading (pushes, their lateness, rows pruned); lost, duplicated and unexpected are totals so far.
public struct SoakSample: Sendable, Codable, Equatable {
    /// Seconds since the soak began.
    public var elapsed: Double
    /// Rows of each Countdown table (`countdown_*` and `live_activity_sessions`), by name.
    public var tableRows: [String: Int]
    /// `pg_total_relation_size` of each Countdown table (heap, indexes, TOAST), by name.
    public var tableBytes: [String: Int]
    /// Rows of the backend's tables the churn writes (`streams`, `stream_participants`, `stream_reminders`): they grow,
    /// as Countdown never deletes them; shown, not judged.
    public var backendRows: [String: Int]
    /// Redis `used_memory`.
    public var redisBytes: Int
    /// Redis keys (the soak's Redis holds only this system's).
    public var redisKeys: Int
    /// Resident memory of each worker, KiB.
    public var workerRSSKB: [Int]
    /// Starts and reminders the fake accepted since the previous reading.
    public var starts: Int
    public var reminders: Int
    /// Seconds past its due time (planned start minus the lead) at which the fake accepted a start, over the starts
    /// since the previous reading: the 99th percentile and the max (nil: none).
    public var startLatenessP99: Double?
    public var startLatenessMax: Double?
    /// The same for reminders: the max.
    public var reminderLatenessMax: Double?
    /// Expected pushes that never came (a start per eligible device, a reminder per device of a subscriber), so far.
    public var lost: Int
    /// Pushes that came more than once, so far.
    public var duplicated: Int
    /// Starts for streams or devices that should have had none (a cancelled stream), so far.
    public var unexpected: Int
    /// Rows the pruner deleted since the previous reading (`countdown_retention_deleted_rows_total`, the fleet's sum).
    public var pruned: Int
    /// Streams created so far.
    public var streamsCreated: Int

    public init(elapsed: Double, tableRows: [String: Int], tableBytes: [String: Int], backendRows: [String: Int], redisBytes: Int,
                redisKeys: Int, workerRSSKB: [Int], starts: Int, reminders: Int, startLatenessP99: Double?, startLatenessMax: Double?,
                reminderLatenessMax: Double?, lost: Int, duplicated: Int, unexpected: Int, pruned: Int, streamsCreated: Int) {
        self.elapsed = elapsed
        self.tableRows = tableRows
        self.tableBytes = tableBytes
        self.backendRows = backendRows
        self.redisBytes = redisBytes
        self.redisKeys = redisKeys
        self.workerRSSKB = workerRSSKB
        self.starts = starts
        self.reminders = reminders
        self.startLatenessP99 = startLatenessP99
        self.startLatenessMax = startLatenessMax
        self.reminderLatenessMax = reminderLatenessMax
        self.lost = lost
        self.duplicated = duplicated
        self.unexpected = unexpected
        self.pruned = pruned
        self.streamsCreated = streamsCreated
    }

    /// Rows of every Countdown table together.
    public var totalRows: Int { tableRows.values.reduce(0, +) }
    /// Bytes of every Countdown table together.
    public var totalBytes: Int { tableBytes.values.reduce(0, +) }
}
