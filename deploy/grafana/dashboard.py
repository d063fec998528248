"""The Grafana dashboard of the worker's and the API's metrics, written to deploy/grafana/countdown.json by
deploy/generate.py.

Queue and outbox gauges describe the shared queue (every worker reports the same value): panels take max()
over workers. Counters and histograms are per worker: panels sum() them. Every query is narrowed to the
dashboard's `namespace` and `job` variables (one Prometheus may watch staging and production), by `scoped`.
"""
import json
import re

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
RATE = "$__rate_interval"
SCOPE = 'namespace=~"$namespace", job=~"$job"'
METRIC = re.compile(r"\b(countdown_[a-z_]+)(\{)?")
# The `platform` label of countdown_pushes_total and countdown_skips_total, as panels describe it.
PLATFORMS = ("Platform: ios for Live Activity pushes, android for the Android countdown's data messages, any for "
             "reminders (one notification to each device of either platform).")


def scoped(expr):
    """`expr` with every countdown_* selector narrowed to the dashboard's namespace and job."""
    return METRIC.sub(lambda m: m.group(1) + "{" + SCOPE + ("," if m.group(2) else "}"), expr)


class Layout:
    """Places panels left to right on Grafana's 24-column grid, wrapping into rows."""

    def __init__(self):
        self.panels = []
        self.x = 0
        self.y = 0
        self.row_height = 0

    def row(self, title):
        self._newline()
        self.panels.append({
            "type": "row", "title": title, "collapsed": False, "panels": [],
            "gridPos": {"h": 1, "w": 24, "x": 0, "y": self.y},
        })
        self.y += 1

    def add(self, panel, w, h):
        if self.x + w > 24:
            self._newline()
        panel["gridPos"] = {"h": h, "w": w, "x": self.x, "y": self.y}
        self.panels.append(panel)
        self.x += w
        self.row_height = max(self.row_height, h)

    def _newline(self):
        if self.x:
            self.y += self.row_height
        self.x = 0
        self.row_height = 0

    def numbered(self):
        for number, panel in enumerate(self.panels, start=1):
            panel["id"] = number
        return self.panels


def targets(queries):
    return [
        {"datasource": DATASOURCE, "expr": scoped(expr), "legendFormat": legend, "refId": chr(ord("A") + index),
         "range": True}
        for index, (expr, legend) in enumerate(queries)
    ]


def timeseries(title, description, queries, unit, stack=False, min_zero=True):
    custom = {"drawStyle": "line", "lineWidth": 1, "fillOpacity": 10, "showPoints": "never",
              "stacking": {"mode": "normal" if stack else "none", "group": "A"}}
    defaults = {"unit": unit, "custom": custom}
    if min_zero:
        defaults["min"] = 0
    return {
        "type": "timeseries", "title": title, "description": description, "datasource": DATASOURCE,
        "targets": targets(queries),
        "fieldConfig": {"defaults": defaults, "overrides": []},
        "options": {"legend": {"displayMode": "table", "placement": "right", "calcs": ["mean", "max"]},
                    "tooltip": {"mode": "multi", "sort": "desc"}},
    }


def stat(title, description, expr, unit, thresholds):
    steps = [{"color": color, "value": value} for value, color in thresholds]
    return {
        "type": "stat", "title": title, "description": description, "datasource": DATASOURCE,
        "targets": targets([(expr, "")]),
        "fieldConfig": {"defaults": {"unit": unit, "thresholds": {"mode": "absolute", "steps": steps}},
                        "overrides": []},
        "options": {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                    "colorMode": "background", "graphMode": "area", "textMode": "auto"},
    }


def quantiles(metric, by, selector=""):
    group = ", ".join(["le", *by])
    legend_prefix = " ".join("{{" + label + "}}" for label in by)
    return [
        (f"histogram_quantile({q}, sum by ({group}) (rate({metric}_bucket{selector}[{RATE}])))",
         f"{legend_prefix} p{int(q * 100)}".strip())
        for q in (0.5, 0.95, 0.99)
    ]


def panels():
    layout = Layout()
    green_red = [(None, "green"), (1, "red")]

    layout.row("Overview")
    layout.add(stat("Workers ready", "Workers whose /readyz succeeds.",
                    "sum(countdown_worker_ready)", "none", [(None, "red"), (1, "green")]), 4, 4)
    layout.add(stat("Jobs / s", "Jobs finished per second, all workers.",
                    f"sum(rate(countdown_jobs_total[{RATE}]))", "ops", [(None, "blue")]), 4, 4)
    layout.add(stat("Push success", "Accepted pushes over all push attempts (dead tokens count as handled).",
                    f'sum(rate(countdown_pushes_total{{result=~"accepted|dead_token"}}[{RATE}]))'
                    f" / sum(rate(countdown_pushes_total[{RATE}]))",
                    "percentunit", [(None, "red"), (0.95, "orange"), (0.99, "green")]), 4, 4)
    layout.add(stat("Due jobs", "Jobs past their due time, not yet claimed.",
                    'max(countdown_queue_jobs{state="due"})', "none", [(None, "green"), (100, "orange")]), 4, 4)
    layout.add(stat("Oldest lateness", "How long the oldest due job has waited past its due time.",
                    "max(countdown_queue_oldest_lateness_seconds)", "s",
                    [(None, "green"), (30, "orange"), (120, "red")]), 4, 4)
    layout.add(stat("Dead letters", "Jobs that exhausted their retries (`countdown-admin dead`).",
                    'max(countdown_queue_jobs{state="dead"})', "none", green_red), 4, 4)

    layout.row("Throughput")
    layout.add(timeseries("Jobs by kind and outcome", "Jobs finished per second.",
                          [(f"sum by (kind, outcome) (rate(countdown_jobs_total[{RATE}]))", "{{kind}} {{outcome}}")],
                          "ops", stack=True), 12, 8)
    layout.add(timeseries("Pushes by platform, kind and result", "Push attempts per second. " + PLATFORMS,
                          [(f"sum by (platform, kind, result) (rate(countdown_pushes_total[{RATE}]))",
                            "{{platform}} {{kind}} {{result}}")],
                          "ops", stack=True), 12, 8)
    layout.add(timeseries("Skipped decisions", "Decisions to send nothing, by platform, job kind and reason (a start "
                          "skips an ineligible device with its platform: `not_ios` is an Android device while "
                          "ANDROID_COUNTDOWN is off; `any` is a decision about no one device).",
                          [(f"sum by (platform, kind, reason) (rate(countdown_skips_total[{RATE}]))",
                            "{{platform}} {{kind}} {{reason}}")],
                          "ops", stack=True), 12, 8)
    layout.add(timeseries("Worker slots", "Jobs in flight against the concurrency limit, per worker.",
                          [('sum by (instance) (countdown_worker_slots{state="busy"})', "{{instance}} busy"),
                           ('sum(countdown_worker_slots{state="total"})', "fleet total"),
                           ('sum(countdown_worker_slots{state="busy"})', "fleet busy")],
                          "none"), 12, 8)

    layout.row("Push results")
    layout.add(timeseries("Push failures by reason", "Everything but accepted pushes, by platform, result and reason.",
                          [(f'sum by (platform, result, reason) (rate(countdown_pushes_total{{result!="accepted"}}[{RATE}]))',
                            "{{platform}} {{result}} {{reason}}")],
                          "ops", stack=True), 12, 8)
    layout.add(timeseries("Push latency", "Provider round trip per push, by transport.",
                          quantiles("countdown_push_latency_seconds", ["transport"]), "s"), 12, 8)
    layout.add(timeseries("Provider token refreshes", "OAuth / JWT token refreshes by provider and result.",
                          [(f"sum by (provider, result) (increase(countdown_token_refreshes_total[{RATE}]))",
                            "{{provider}} {{result}}")],
                          "none"), 12, 8)
    layout.add(timeseries("Push error ratio", "Rejected, retried and misconfigured pushes over all pushes.",
                          [(f'sum(rate(countdown_pushes_total{{result!~"accepted|dead_token"}}[{RATE}]))'
                            f" / sum(rate(countdown_pushes_total[{RATE}]))", "error ratio")],
                          "percentunit"), 12, 8)

    layout.row("Platforms and the Android countdown")
    layout.add(timeseries("Pushes by platform", "Accepted and not accepted pushes per second, by platform. "
                          + PLATFORMS,
                          [(f'sum by (platform) (rate(countdown_pushes_total{{result="accepted"}}[{RATE}]))',
                            "{{platform}} accepted"),
                           (f'sum by (platform) (rate(countdown_pushes_total{{result!="accepted"}}[{RATE}]))',
                            "{{platform}} not accepted")],
                          "ops"), 12, 8)
    layout.add(timeseries("Push error ratio by platform", "Rejected, retried and misconfigured pushes over all "
                          "pushes of each platform (dead tokens excluded, as in the CountdownPushErrorRate alert).",
                          [(f'sum by (platform) (rate(countdown_pushes_total{{result!~"accepted|dead_token"}}[{RATE}]))'
                            f" / sum by (platform) (rate(countdown_pushes_total[{RATE}]))", "{{platform}}")],
                          "percentunit"), 12, 8)
    layout.add(timeseries("Android countdown messages", "The Android countdown's data messages (ANDROID_COUNTDOWN, "
                          "SPEC 10.4) per second, by job kind (start, update, end) and result.",
                          [(f'sum by (kind, result) (rate(countdown_pushes_total{{platform="android"}}[{RATE}]))',
                            "{{kind}} {{result}}")],
                          "ops", stack=True), 12, 8)
    layout.add(timeseries("Android countdown ends",
                          "End messages to Android devices, by result and reason: accepted ends dismiss the "
                          "countdown; dead_token ends clear the token; retries wait for the push service; ends "
                          "skipped for a device without an FCM token (no_fcm_token). Ends given up on are in "
                          "\"Undeliverable end pushes\" (both platforms).",
                          [(f'sum by (result, reason) (increase(countdown_pushes_total{{platform="android", kind="end"}}[{RATE}]))',
                            "{{result}} {{reason}}"),
                           (f'sum by (reason) (increase(countdown_skips_total{{platform="android", kind="end"}}[{RATE}]))',
                            "skipped {{reason}}")],
                          "none"), 12, 8)

    layout.row("Push safety")
    layout.add(timeseries("Token guard and paused job kinds",
                          "1 while the token guard holds token refusals back (no token is cleared); 1 per job kind "
                          "whose claiming is paused (countdown-admin pause).",
                          [("max(countdown_push_token_guard_tripped)", "token guard tripped"),
                           ("max by (kind) (countdown_queue_paused)", "paused {{kind}}")], "none"), 12, 8)
    layout.add(timeseries("Undeliverable end pushes",
                          "iOS sessions and Android countdowns given up on when their end's dismissal window "
                          "closed, by last reason (countdown-admin show lists them).",
                          [(f"sum by (reason) (increase(countdown_end_undeliverable_total[{RATE}]))", "{{reason}}")],
                          "none"), 12, 8)

    layout.row("Queue and lateness")
    layout.add(timeseries("Queue depth by state", "Jobs in the Redis queue: delayed, due, leased, dead.",
                          [("max by (state) (countdown_queue_jobs)", "{{state}}")], "none"), 12, 8)
    layout.add(timeseries("Oldest due job", "Time the oldest due job has waited past its due time.",
                          [("max(countdown_queue_oldest_lateness_seconds)", "oldest lateness")], "s"), 12, 8)
    layout.add(timeseries("Claim lateness", "Claim time minus due time, by job kind.",
                          quantiles("countdown_job_lateness_seconds", ["kind"]), "s"), 12, 8)
    layout.add(timeseries("Job duration", "Handler run time, by job kind.",
                          quantiles("countdown_job_duration_seconds", ["kind"]), "s"), 12, 8)

    layout.row("Outbox and reconciler")
    layout.add(timeseries("Outbox backlog", "Outbox rows not yet relayed to the queue.",
                          [("max(countdown_outbox_backlog)", "backlog")], "none"), 8, 8)
    layout.add(timeseries("Outbox lag", "Age of the oldest outbox row not yet relayed.",
                          [("max(countdown_outbox_lag_seconds)", "lag")], "s"), 8, 8)
    layout.add(timeseries("Reconciler", "Reconcile runs by result and jobs it repaired, by kind.",
                          [(f"sum by (result) (increase(countdown_reconcile_runs_total[{RATE}]))", "runs {{result}}"),
                           (f"sum by (kind) (increase(countdown_reconcile_repaired_total[{RATE}]))",
                            "repaired {{kind}}")],
                          "none"), 8, 8)
    layout.add(timeseries("Quarantine", "Rows the relay or the reconciler could not read or plan (countdown-admin "
                          "quarantine list), and how often they were met.",
                          [("max(countdown_quarantine_rows)", "quarantined rows"),
                           (f"sum by (found_by) (increase(countdown_quarantine_events_total[{RATE}]))",
                            "found by {{found_by}}")],
                          "none"), 8, 8)

    layout.row("API")
    layout.add(timeseries("API requests by route and status", "Requests answered per second.",
                          [(f"sum by (route, status) (rate(countdown_api_requests_total[{RATE}]))",
                            "{{route}} {{status}}")],
                          "reqps", stack=True), 12, 8)
    layout.add(timeseries("API 5xx ratio", "Requests answered 5xx over all requests (alert above 5%).",
                          [(f'sum(rate(countdown_api_requests_total{{status=~"5.."}}[{RATE}]))'
                            f" / sum(rate(countdown_api_requests_total[{RATE}]))", "5xx ratio")],
                          "percentunit"), 12, 8)
    layout.add(timeseries("API latency", "From a complete request to its answer, by route.",
                          quantiles("countdown_api_request_duration_seconds", ["route"]), "s"), 12, 8)
    layout.add(timeseries("API authentication failures", "Requests refused with 401, by route.",
                          [(f"sum by (route) (rate(countdown_api_auth_failures_total[{RATE}]))", "{{route}}")],
                          "reqps"), 12, 8)

    layout.row("Fleet")
    layout.add(timeseries("Ready workers", "Workers reporting ready, and processes by version (worker and API).",
                          [("sum(countdown_worker_ready)", "ready"),
                           ("count by (job, version) (countdown_build_info)", "{{job}} {{version}}")],
                          "none"), 12, 6)
    layout.add(timeseries("Clock offset", "Redis server time minus each worker's clock (alert beyond 2 s).",
                          [("max by (instance) (countdown_worker_clock_offset_seconds)", "{{instance}}")],
                          "s", min_zero=False), 12, 6)
    return layout.numbered()


def query_variable(name, label, query):
    """A multi-value variable from label values, "All" by default. With no label at all (a Prometheus without
    namespaces, e.g. compose), All matches the empty value too."""
    return {
        "name": name, "label": label, "type": "query", "datasource": DATASOURCE,
        "query": {"query": query, "refId": f"{name}-values"}, "definition": query,
        "multi": True, "includeAll": True, "allValue": ".*", "current": {"text": "All", "value": "$__all"},
        "hide": 0, "refresh": 2, "sort": 1, "regex": "", "options": [],
    }


def dashboard():
    return {
        "uid": "countdown-workers",
        "title": "Countdown",
        "description": "Throughput, push results, queue depth and lateness, outbox lag and latency of "
                       "countdown-worker, and the API's requests, per namespace and job (generated by "
                       "deploy/generate.py from deploy/grafana/dashboard.py).",
        "tags": ["countdown"],
        "timezone": "browser",
        "editable": True,
        "graphTooltip": 1,
        "refresh": "30s",
        "schemaVersion": 39,
        "version": 1,
        "time": {"from": "now-6h", "to": "now"},
        "timepicker": {},
        "annotations": {"list": []},
        "links": [],
        "templating": {"list": [
            {"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus",
             "current": {}, "hide": 0, "refresh": 1, "regex": "", "options": []},
            query_variable("namespace", "Namespace", "label_values(countdown_build_info, namespace)"),
            query_variable("job", "Job", 'label_values(countdown_build_info{namespace=~"$namespace"}, job)'),
        ]},
        "panels": panels(),
    }


def render():
    return json.dumps(dashboard(), indent=2, sort_keys=True) + "\n"
