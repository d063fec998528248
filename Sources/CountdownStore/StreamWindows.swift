/// The seam of the handlers that look at streams by their time windows: the backfill and the expiry.
public protocol StreamWindows: Sendable {
    /// The streams in their start window in which `member` takes part (a backfill's streams).
    func streamsInStartWindow(of member: StreamQueries.Member, lead: Int) async throws -> [String]

    /// Expires `stream` if it is still scheduled long after its planned start (`StreamQueries.expire`).
    func expire(_ stream: String, expireAfter: Int, tolerance: Double) async throws -> StreamQueries.Expiry
}
