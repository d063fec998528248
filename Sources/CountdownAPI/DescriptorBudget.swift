#if canImport(Glibc)
import Glibc
#endif

/// How many client connections the API may hold so that PostgreSQL always finds a free file descriptor.
///
/// At start the process raises its soft `RLIMIT_NOFILE` to the hard limit (a container often starts with 1,024
/// soft under a far higher hard limit). The connection cap is then the configured one, but never more than the
/// limit less the database pool and a reserve (listening sockets, the metrics listener's connections, the
/// event loops, key files, standard streams, libpq's own sockets while reconnecting). Past `overloadThreshold`
/// open connections a request is answered `503` with `Retry-After` at once instead of queuing behind others.
public struct DescriptorBudget: Sendable, Equatable {
    /// Descriptors kept for everything but client connections and the pool.
    public static let reserve = 256
    /// Fewest client connections the API starts with; a smaller budget is a configuration error.
    public static let minimumConnections = 16

    /// The soft limit in effect after raising it.
    public let descriptorLimit: Int
    /// Most simultaneous client connections (libmicrohttpd's `MHD_OPTION_CONNECTION_LIMIT`).
    public let connections: Int
    /// Past this many open connections requests are answered `503` (nine in ten of `connections`).
    public let overloadThreshold: Int
    /// Whether the configured cap had to be lowered to fit the limit.
    public let lowered: Bool

    /// The budget for `descriptorLimit` descriptors, `configured` connections and a pool of `pool`.
    /// - Returns: nil when fewer than `minimumConnections` would fit.
    public init?(descriptorLimit: Int, configured: Int, pool: Int) {
        let available = descriptorLimit - pool - Self.reserve
        guard available >= Self.minimumConnections else { return nil }
        self.descriptorLimit = descriptorLimit
        connections = min(configured, available)
        lowered = configured > available
        overloadThreshold = max(1, connections - max(1, connections / 10))
    }

    /// Raises the soft descriptor limit to the hard one (capped at `ceiling`, since "unlimited" cannot be set) and
    /// returns the soft limit in effect afterwards.
    public static func raiseSoftLimit(ceiling: Int = 1 << 20) -> Int {
        var limits = rlimit()
        // rlim_t.max is RLIM_INFINITY.
        guard getrlimit(noFile, &limits) == 0 else { return 1024 }
        let hard = limits.rlim_max == rlim_t.max ? rlim_t(ceiling) : min(limits.rlim_max, rlim_t(ceiling))
        if limits.rlim_cur == rlim_t.max || limits.rlim_cur >= hard { return Int(clamping: min(limits.rlim_cur, rlim_t(ceiling))) }
        var raised = limits
        raised.rlim_cur = hard
        if setrlimit(noFile, &raised) == 0 { return Int(clamping: hard) }
        return Int(clamping: limits.rlim_cur)
    }

    private static var noFile: __rlimit_resource_t { __rlimit_resource_t(RLIMIT_NOFILE.rawValue) }
}
