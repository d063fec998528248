import Telemetry

/// The API's metric families: requests by route, method and status, and latency by route.
public struct APIMetrics: Sendable {
    /// Latency buckets in seconds, 1 ms to 2.5 s (the API answers in milliseconds).
    public static let latencyBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    public let registry: MetricsRegistry
    let requests: Counter
    let latency: Histogram
    let authFailures: Counter

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
