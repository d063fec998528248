/// The system's queue at one moment of the Redis server's clock.
public struct QueueCounts: Sendable, Equatable {
    /// Waiting jobs whose due time has come.
    public let dueNow: Int
    /// Waiting jobs not due yet.
    public let waiting: Int
    /// Claimed jobs whose lease runs.
    public let leased: Int
    public let dead: Int

    public init(dueNow: Int, waiting: Int, leased: Int, dead: Int) {
        self.dueNow = dueNow
        self.waiting = waiting
        self.leased = leased
        self.dead = dead
    }
}
