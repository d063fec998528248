import CountdownDomain
import CountdownFlows
import Telemetry

/// Every metric the worker exports (names are a contract with deploy/grafana and the alert rules).
public final class WorkerMetrics: Sendable {
    public let registry: MetricsRegistry
    public let jobs: Counter
    public let jobDuration: Histogram
    public let jobLateness: Histogram
    public let pushes: Counter
    public let pushLatency: Histogram
    public let skips: Counter
    public let queueJobs: Gauge
    public let queueOldestLateness: Gauge
    public let outboxBacklog: Gauge
    public let outboxLag: Gauge
    public let tokenRefreshes: Counter
    public let slots: Gauge
    public let reconcileRuns: Counter
    public let reconcileRepaired: Counter
    public let quarantined: Counter
    public let retentionRuns: Counter
    public let retentionDeleted: Counter
    public let retentionOldestAge: Gauge
    public let restoreGuardTripped: Gauge
    public let quarantineRows: Gauge
    public let ready: Gauge
    public let clockOffset: Gauge
    public let takeovers: Counter
    public let unsettledStarts: Gauge
    public let refusedStartOutcomes: Counter
    public let claimsExtended: Counter
    public let tokenGuardTripped: Gauge
    public let queuePaused: Gauge
    public let endUndeliverable: Counter
    public let endHoldsCapped: Counter
    public let endRecoveryWakes: Counter
    public let connectionBudget: Gauge

    public init(registry: MetricsRegistry = MetricsRegistry(), version: String = BuildInfo.version) {
        self.registry = registry
        jobs = registry.counter("countdown_jobs_total", help: "Jobs handled, by kind and outcome (done, skipped, retried, rescheduled, dead, failed).", labels: ["kind", "outcome"])
        jobDuration = registry.histogram("countdown_job_duration_seconds", help: "Time spent handling a job.", labels: ["kind"])
        jobLateness = registry.histogram("countdown_job_lateness_seconds", help: "Claim time minus due time, by the Redis clock.", labels: ["kind"],
                                         buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15, 60])
        pushes = registry.counter("countdown_pushes_total", help: "Pushes sent, by kind, result, reason and platform (ios, android, any).",
                                   labels: ["kind", "result", "reason", "platform"])
        pushLatency = registry.histogram("countdown_push_latency_seconds", help: "Push request latency.", labels: ["transport"])
        skips = registry.counter("countdown_skips_total", help: "Decisions not to send, by kind, reason and platform (ios, android, any).",
                                labels: ["kind", "reason", "platform"])
        queueJobs = registry.gauge("countdown_queue_jobs", help: "Queue jobs by state (delayed, due, leased, dead).", labels: ["state"])
        queueOldestLateness = registry.gauge("countdown_queue_oldest_lateness_seconds", help: "How late the oldest due job is.")
        outboxBacklog = registry.gauge("countdown_outbox_backlog", help: "Outbox rows waiting for the relay.")
        outboxLag = registry.gauge("countdown_outbox_lag_seconds", help: "Age of the oldest outbox row still waiting for the relay.")
        tokenRefreshes = registry.counter("countdown_token_refreshes_total", help: "OAuth / provider token refreshes.", labels: ["provider", "result"])
        slots = registry.gauge("countdown_worker_slots", help: "Job slots of this worker (busy, total).", labels: ["state"])
        reconcileRuns = registry.counter("countdown_reconcile_runs_total", help: "Reconciler runs by result.", labels: ["result"])
        reconcileRepaired = registry.counter("countdown_reconcile_repaired_total", help: "Jobs the reconciler added or removed, by kind.", labels: ["kind"])
        retentionRuns = registry.counter("countdown_retention_runs_total", help: "Pruner runs by result (ok, skipped: another worker's turn, error).",
                                         labels: ["result"])
        retentionDeleted = registry.counter("countdown_retention_deleted_rows_total", help: "Rows the pruner deleted, by table.", labels: ["table"])
        retentionOldestAge = registry.gauge("countdown_retention_oldest_row_age_seconds",
                                            help: "Age of each table's oldest row on the retention's clock (a stream's tables: since its stream left scheduled).",
                                            labels: ["table"])
        restoreGuardTripped = registry.gauge("countdown_restore_guard_tripped",
                                             help: "1 while PostgreSQL's start ledger is behind the fleet's watermark and starts, backfills and reminders are held.")
        quarantined = registry.counter("countdown_quarantine_events_total", help: "Rows quarantined (or found again in quarantine), by who found them (relay, reconciler).", labels: ["found_by"])
        quarantineRows = registry.gauge("countdown_quarantine_rows", help: "Rows in the quarantine (countdown-admin quarantine list).")
        ready = registry.gauge("countdown_worker_ready", help: "1 when PostgreSQL and Redis are reachable.")
        clockOffset = registry.gauge("countdown_worker_clock_offset_seconds", help: "Redis server time minus this host's clock.")
        takeovers = registry.counter("countdown_worker_takeovers_total", help: "Dead workers whose queue leases this worker handed back.")
        unsettledStarts = registry.gauge("countdown_start_outcomes_unsettled", help: "Start push outcomes kept in memory, not yet written to PostgreSQL.")
        refusedStartOutcomes = registry.counter("countdown_start_outcomes_refused_total",
                                                help: "Start push outcomes the ledger refused: their row was no longer held by the claim they answer.")
        claimsExtended = registry.counter("countdown_claim_extensions_total", help: "Runs extending this worker's ledger and session claims, by result.", labels: ["result"])
        tokenGuardTripped = registry.gauge("countdown_push_token_guard_tripped",
                                           help: "1 while token refusals look like a misconfiguration and no token is cleared.")
        endUndeliverable = registry.counter("countdown_end_undeliverable_total",
                                            help: "Sessions whose end push could not be delivered before the dismissal window closed, by last reason.",
                                            labels: ["reason"])
        endHoldsCapped = registry.counter("countdown_end_holds_capped_total",
                                          help: "End pushes whose Retry-After outlasted the dismissal window: held only until it closes, by platform.",
                                          labels: ["platform"])
        endRecoveryWakes = registry.counter("countdown_end_recovery_wakes_total",
                                            help: "End jobs made due at once because the push service accepted a push again while they waited for it.")
        queuePaused = registry.gauge("countdown_queue_paused", help: "1 for each job kind whose claiming is paused.", labels: ["kind"])
        connectionBudget = registry.gauge("countdown_connection_budget",
                                          help: "PostgreSQL connections the fleet needs at its largest during a rollout (part=needed) and what the "
                                              + "server allows ordinary roles (part=available), read at start with FLEET_MAX_WORKERS.",
                                          labels: ["part"])
        registry.gauge("countdown_build_info", help: "Build information.", labels: ["version"]).set(1, labels: version)
    }

    public func skip(kind: String, reason: String, platform: String) {
        skips.increment(labels: kind, reason, platform)
    }

    /// `platform`: `ios` (Live Activity), `android` (the Android countdown) or `any` (reminders).
    public func push(kind: PushKind, platform: String, delivery: Delivery) {
        pushes.increment(labels: kind.rawValue, delivery.result, Self.boundedLabel(delivery.reason), platform)
    }

    /// Keeps label values to short codes (`UNREGISTERED`, `timeout`); anything else becomes `other`.
    static func boundedLabel(_ value: String) -> String {
        value.count <= 40 && value.allSatisfy({ $0.isLetter || $0.isNumber || "_-.".contains($0) }) ? value : "other"
    }
}

extension WorkerMetrics: FlowMetrics {
    public func countUndeliverableEnd(reason: String) {
        endUndeliverable.increment(labels: Self.boundedLabel(reason))
    }

    public func countCappedHolds(_ count: Int, platform: String) {
        endHoldsCapped.increment(by: UInt64(max(0, count)), labels: platform)
    }

    public func countRefusedStartOutcome() {
        refusedStartOutcomes.increment()
    }
}
