import Telemetry

/// The console's metric families (served on `CONSOLE_METRICS_ADDR`).
public struct ConsoleMetrics: Sendable {
    public let registry: MetricsRegistry
    let requests: Counter
    let actions: Counter
    let latency: Histogram
    let auditLimited: Counter

    public init(registry: MetricsRegistry) {
        self.registry = registry
        requests = registry.counter("countdown_console_requests_total", help: "Console requests answered, by page and status.",
                                    labels: ["page", "status"])
        actions = registry.counter("countdown_console_actions_total", help: "Operator actions, by action and outcome (done, refused, failed).",
                                   labels: ["action", "outcome"])
        auditLimited = registry.counter("countdown_console_audit_limited_total",
                                        help: "Actions refused past the per-user audit limit (summed in one audit row per user and minute).")
        latency = registry.histogram("countdown_console_request_duration_seconds", help: "Time to answer a console request, by page.",
                                     labels: ["page"], buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5])
        registry.gauge("countdown_build_info", help: "Build information.", labels: ["version"]).set(1, labels: BuildInfo.version)
    }

    func record(page: String, status: Int, duration: Duration) {
        requests.increment(labels: page, String(status))
        latency.observe(duration, labels: page)
    }
}
