/// The token guard's rule (SPEC section 9), pure: when token refusals in the last window reach `minRefusals` and
/// make more than `ratio` of the sends, refusals look like a misconfiguration (wrong project, environment or
/// bundle id) rather than dead tokens, and no token is cleared.
public struct TokenGuard: Sendable, Equatable {
    /// `TOKEN_GUARD_MIN_REFUSALS`.
    public var minRefusals: Int
    /// `TOKEN_GUARD_RATIO`.
    public var ratio: Double
    /// The sliding window the counts cover.
    public var window: Duration
    /// How long a refusal held back by the guard waits before it is sent again: shorter than the window, so the
    /// retry comes while the refusals that tripped the guard still count (each retry refused again counts for the
    /// next). At the window's length, the retries of a burst refused within a second would find it gone from the
    /// window, and up to `minRefusals - 1` more tokens would be cleared every window while the misconfiguration lasts.
    public var retryAfter: Duration

    public init(minRefusals: Int = 20, ratio: Double = 0.2, window: Duration = .seconds(60), retryAfter: Duration = .seconds(30)) {
        self.minRefusals = minRefusals
        self.ratio = ratio
        self.window = window
        self.retryAfter = retryAfter
    }

    /// Sends and token refusals in the window, fleet-wide.
    public struct Counts: Sendable, Equatable {
        public var sends: Int
        public var refusals: Int

        public init(sends: Int, refusals: Int) {
            self.sends = sends
            self.refusals = refusals
        }
    }

    /// Whether the guard holds tokens back for these counts (refusals are counted among the sends).
    public func isTripped(_ counts: Counts) -> Bool {
        counts.refusals >= minRefusals && Double(counts.refusals) > ratio * Double(max(counts.sends, counts.refusals))
    }
}
