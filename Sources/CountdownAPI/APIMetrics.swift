import Telemetry

/// The API's metric families: requests by route, method and status, and latency by route.
public struct APIMetrics: Sendable {
    /// Latency buckets in seconds, 1 ms to 2.5 s (the API answers in milliseconds).
    public static let latencyBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    public let registry: MetricsRegistry
    let requests: Counter
    let latency: Histogram
    let authFailures: Counter
    let deadlinesExceeded: Counter
    let rateLimited: Counter
    let takeovers: Counter
    let takeoverSessionsEnded: Counter
    let refusedDeviceWrites: Counter
    let slowRequestsClosed: Counter
    /// Failed reloads of `API_JWT_KEYS` (the previous keys stay in use).
    public let jwtKeyReloadFailures: Counter
    /// Devices deleted because they never got a user within `API_OWNERLESS_DEVICE_TTL_HOURS`.
    public let ownerlessDevicesExpired: Counter

    public init(registry: MetricsRegistry) {
        self.registry = registry
        requests = registry.counter(
            "countdown_api_requests_total", help: "HTTP requests answered, by route template, method and status.",
            labels: ["route", "method", "status"])
        latency = registry.histogram(
            "countdown_api_request_duration_seconds", help: "Time from a complete request to its answer, by route template.",
            labels: ["route"], buckets: Self.latencyBuckets)
        authFailures = registry.counter(
            "countdown_api_auth_failures_total", help: "Requests refused with 401, by route template.", labels: ["route"])
        deadlinesExceeded = registry.counter(
            "countdown_api_deadline_exceeded_total", help: "Requests answered 503 because their deadline passed, by route template.",
            labels: ["route"])
        rateLimited = registry.counter(
            "countdown_api_rate_limited_total", help: "Writes refused with 429, by limit (user, address or anonymous).", labels: ["scope"])
        takeovers = registry.counter(
            "countdown_api_device_takeovers_total", help: "Devices linked to one user taken over by another user's authenticated registration.")
        takeoverSessionsEnded = registry.counter(
            "countdown_api_takeover_sessions_ended_total",
            help: "Runtime sessions of a previous user removed at a device takeover and handed to the worker for their end push.")
        refusedDeviceWrites = registry.counter(
            "countdown_api_device_writes_refused_total", help: "Unauthenticated registrations refused because the device is linked to a user.")
        slowRequestsClosed = registry.counter(
            "countdown_api_slow_requests_closed_total",
            help: "Connections closed because a request (headers and body) did not arrive within API_REQUEST_READ_TIMEOUT_SECONDS.")
        jwtKeyReloadFailures = registry.counter(
            "countdown_api_jwt_key_reload_failures_total", help: "Reloads of API_JWT_KEYS that failed (the previous keys stay in use).")
        ownerlessDevicesExpired = registry.counter(
            "countdown_api_ownerless_devices_expired_total",
            help: "Devices registered without a user that never got one, deleted after API_OWNERLESS_DEVICE_TTL_HOURS untouched.")
        registry.gauge("countdown_build_info", help: "Build information.", labels: ["version"]).set(1, labels: BuildInfo.version)
    }

    func record(route: String, method: String, status: Int, duration: Duration) {
        requests.increment(labels: route, Self.methodLabel(method), String(status))
        latency.observe(duration, labels: route)
        if status == 401 { authFailures.increment(labels: route) }
    }

    /// Known methods as sent, anything else as `other` (bounded label values).
    private static func methodLabel(_ method: String) -> String {
        ["GET", "POST", "DELETE", "PUT", "PATCH", "HEAD", "OPTIONS"].contains(method) ? method : "other"
    }
}
