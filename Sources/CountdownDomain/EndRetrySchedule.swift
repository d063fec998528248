/// When an end push the push service refused (for any reason but a dead token) is tried again (SPEC 12.2): every
/// `firstMinuteInterval` during the first minute after its first failure, so a fault that clears within 20 s still
/// has the end accepted within 30 s of the stream's end; then a backoff doubling from 30 s to 10 minutes. A longer
/// `Retry-After` is applied on top by the caller. Pure.
public enum EndRetrySchedule {
    /// How long failures are retried at the short interval.
    public static let firstMinuteSeconds = 60.0
    /// The interval then: at most 10 s apart, with room for the job's own latency.
    public static let firstMinuteInterval: Duration = .seconds(5)
    /// The backoff's bounds after the first minute.
    public static let shortestBackoffSeconds = 30.0
    public static let longestBackoffSeconds = 600.0

    /// The delay before the next try of ends whose most recent first failure was `failingForSeconds` ago (the youngest
    /// failure decides: it is the one still in its first minute). After the first minute the delay is the time failed
    /// so far less 30 s, within 30 s…10 min: 30, 60, 120, 240, 480, 600 s, as a backoff doubling per try.
    public static func delay(failingForSeconds: Double) -> Duration {
        let failing = max(0, failingForSeconds)
        if failing < firstMinuteSeconds { return firstMinuteInterval }
        let seconds = min(longestBackoffSeconds, max(shortestBackoffSeconds, failing - shortestBackoffSeconds))
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }
}
