"""The Grafana dashboard, the Prometheus configuration and alert rules, the adapter rules and the generated
files, all against the metrics the worker exports."""
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from compose_checks import BASE, container_mounts
from promql_checks import adapter_to_promql, check_expression, check_grouped_by, grafana_to_promql

DASHBOARD = "deploy/grafana/countdown.json"
ALERTS = "deploy/prometheus/alerts.yml"
ALERT_TESTS = "deploy/prometheus/alerts.test.yml"
PROMETHEUS_CONFIG = "deploy/prometheus/prometheus.yml"
ADAPTER_VALUES = "deploy/kubernetes/components/monitoring/prometheus-adapter-values.yaml"
PROMETHEUS_RULE = "deploy/kubernetes/components/monitoring/prometheusrule.yaml"
# What the issue asks the dashboard to show, as metrics it must query.
DASHBOARD_MUST_SHOW = {
    "throughput": "countdown_jobs_total",
    "push results by reason": "countdown_pushes_total",
    "queue depth": "countdown_queue_jobs",
    "lateness": "countdown_job_lateness_seconds_bucket",
    "outbox lag": "countdown_outbox_lag_seconds",
    "latency": "countdown_push_latency_seconds_bucket",
    "API requests": "countdown_api_requests_total",
    "API latency": "countdown_api_request_duration_seconds_bucket",
}
# Breakdowns the dashboard must show: a query of the metric that sums by the label (SPEC 10.4: pushes and
# skips by platform).
DASHBOARD_MUST_GROUP = {
    "pushes by platform": ("countdown_pushes_total", "platform"),
    "skips by platform": ("countdown_skips_total", "platform"),
}
GROUPING = re.compile(r"\bby\s*\(([^)]*)\)")
# Variables every query must use: one Prometheus may watch several deployments.
DASHBOARD_SCOPE = ("namespace", "job")
ALERTS_MUST_COVER = {
    "dead letters growing": "countdown_queue_jobs",
    "lateness above a bound": "countdown_queue_oldest_lateness_seconds",
    "outbox lag": "countdown_outbox_lag_seconds",
    "push error rate": "countdown_pushes_total",
    "no worker ready": "countdown_worker_ready",
    "API 5xx": "countdown_api_requests_total",
    "reconciler errors": "countdown_reconcile_runs_total",
    "clock offset": "countdown_worker_clock_offset_seconds",
    "scrape failures": "up",
    "JWT key reload failures": "countdown_api_jwt_key_reload_failures_total",
    "the connection budget": "countdown_connection_budget",
    "container restarts (kube-state-metrics)": "kube_pod_container_status_restarts_total",
    "OOM kills (kube-state-metrics)": "kube_pod_container_status_last_terminated_reason",
    "stuck rollouts (kube-state-metrics)": "kube_deployment_status_replicas_updated",
    "Redis down (redis_exporter)": "redis_up",
    "Redis eviction policy (redis_exporter)": "redis_instance_info",
    "Redis connections (redis_exporter)": "redis_connected_clients",
    "Redis replication (redis_exporter)": "redis_master_link_up",
    "PostgreSQL down (postgres_exporter)": "pg_up",
    "PostgreSQL connections (postgres_exporter)": "pg_stat_activity_count",
    "PostgreSQL replication (postgres_exporter)": "pg_stat_replication_pg_wal_lsn_diff",
}
# "Down" alerts must also fire when their targets are gone everywhere (absent()) and hold through gaps
# (keep_firing_for); alerts on `up` must find targets under annotation discovery too (the component label).
DOWN_ALERT = re.compile(r"(Down|NoWorkerReady)$")
ANNOTATION_DISCOVERY_LABEL = "app_kubernetes_io_component"
RUNBOOKS = "docs/runbooks.md"
RUNBOOK_URL = re.compile(r"^https://\S+/docs/runbooks\.md#([a-z0-9-]+)$")


def check_generated(repo, report):
    result = subprocess.run([sys.executable, str(repo / "deploy/generate.py"), "--check"], capture_output=True,
                            text=True)
    if result.returncode != 0:
        report.error("deploy/generate.py", result.stderr.strip() or "generated files are out of date")


def check_dashboard(repo, catalog, report):
    try:
        dashboard = json.loads((repo / DASHBOARD).read_text())
    except ValueError as error:
        report.error(DASHBOARD, f"not JSON: {error}")
        return 0
    for key in ("uid", "title", "panels", "schemaVersion"):
        if key not in dashboard:
            report.error(DASHBOARD, f"has no {key}")
    variables = {v.get("name") for v in dashboard.get("templating", {}).get("list", [])}
    for variable in DASHBOARD_SCOPE:
        if variable not in variables:
            report.error(DASHBOARD, f"has no {variable} variable")
    ids = set()
    used = set()
    grouped = set()
    count = 0
    for panel in dashboard.get("panels", []):
        where = f"{DASHBOARD} panel {panel.get('id')} ({panel.get('title')})"
        if panel.get("id") in ids:
            report.error(where, "duplicate panel id")
        ids.add(panel.get("id"))
        grid = panel.get("gridPos", {})
        if grid.get("x", 0) + grid.get("w", 0) > 24:
            report.error(where, "wider than the 24-column grid")
        if panel.get("type") == "row":
            continue
        uid = panel.get("datasource", {}).get("uid", "")
        if uid.startswith("$") and uid.strip("${}") not in variables:
            report.error(where, f"data source {uid} is not a dashboard variable")
        ref_ids = set()
        for target in panel.get("targets", []):
            if target.get("refId") in ref_ids:
                report.error(where, f"duplicate refId {target.get('refId')}")
            ref_ids.add(target.get("refId"))
            metrics = check_expression(grafana_to_promql(target.get("expr", "")), catalog, where, report)
            used |= metrics
            grouped |= {(metric, label.strip()) for metric in metrics
                        for labels in GROUPING.findall(target.get("expr", "")) for label in labels.split(",")}
            for variable in DASHBOARD_SCOPE:
                if f"${variable}" not in target.get("expr", ""):
                    report.error(where, f"query {target.get('refId')} is not narrowed to ${variable}")
            count += 1
        if not panel.get("targets"):
            report.error(where, "has no queries")
    for topic, metric in DASHBOARD_MUST_SHOW.items():
        if metric not in used:
            report.error(DASHBOARD, f"shows no {topic} ({metric})")
    for topic, (metric, label) in DASHBOARD_MUST_GROUP.items():
        if (metric, label) not in grouped:
            report.error(DASHBOARD, f"shows no {topic} (a query of {metric} summed by {label})")
    return count


def check_alerts(repo, catalog, tools, report):
    for command, what in (([tools.promtool, "check", "rules", ALERTS], "check rules"),
                          ([tools.promtool, "test", "rules", ALERT_TESTS], "test rules")):
        result = subprocess.run(command, cwd=repo, capture_output=True, text=True)
        if result.returncode != 0:
            report.error(ALERTS, f"promtool {what}:\n{(result.stdout + result.stderr).strip()}")
    rules = yaml.safe_load((repo / ALERTS).read_text())
    used = set()
    count = 0
    for group in rules.get("groups", []):
        for rule in group.get("rules", []):
            where = f"{ALERTS} {rule.get('alert') or rule.get('record')}"
            used |= check_expression(rule["expr"], catalog, where, report)
            count += 1
            if "alert" in rule:
                if rule.get("labels", {}).get("severity") not in ("critical", "warning", "info"):
                    report.error(where, "needs labels.severity critical, warning or info")
                for annotation in ("summary", "description", "runbook_url"):
                    if not rule.get("annotations", {}).get(annotation):
                        report.error(where, f"needs annotations.{annotation}")
                _check_runbook(repo, rule, where, report)
                check_grouped_by(rule["expr"], "namespace", where, report)
                _check_down_alert(rule, where, report)
    for topic, metric in ALERTS_MUST_COVER.items():
        if metric not in used:
            report.error(ALERTS, f"no alert on {topic} ({metric})")
    rule_object = yaml.safe_load((repo / PROMETHEUS_RULE).read_text())
    if rule_object.get("spec", {}).get("groups") != rules.get("groups"):
        report.error(PROMETHEUS_RULE, f"groups differ from {ALERTS}: run python3 deploy/generate.py")
    return count


def _check_down_alert(rule, where, report):
    expr = rule["expr"]
    if DOWN_ALERT.search(rule["alert"]):
        if "absent(" not in expr:
            report.error(where, "a down alert must also fire on absent(): no target left anywhere")
        if not rule.get("keep_firing_for"):
            report.error(where, "a down alert must hold with keep_firing_for")
    if re.search(r"\bup\{job", expr) and ANNOTATION_DISCOVERY_LABEL not in expr:
        report.error(where, f"selects `up` by job only: also match annotation discovery ({ANNOTATION_DISCOVERY_LABEL})")


def _check_runbook(repo, rule, where, report):
    """runbook_url points at docs/runbooks.md#<alert name in lower case>, a heading that exists."""
    url = rule.get("annotations", {}).get("runbook_url", "")
    match = RUNBOOK_URL.match(url)
    anchor = rule["alert"].lower()
    if not match or match.group(1) != anchor:
        report.error(where, f"runbook_url must end in {RUNBOOKS}#{anchor} (got {url!r})")
        return
    headings = {re.sub(r"[^a-z0-9 -]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
                for line in (repo / RUNBOOKS).read_text().splitlines() if line.startswith("#")}
    if anchor not in headings:
        report.error(where, f"{RUNBOOKS} has no heading for #{anchor}")


def check_prometheus_config(repo, tools, report):
    """promtool check config, with the compose mounts mapped back to the repository's files."""
    compose = yaml.safe_load((repo / BASE).read_text())
    mounts = container_mounts(compose["services"]["prometheus"])
    config = yaml.safe_load((repo / PROMETHEUS_CONFIG).read_text())
    config["rule_files"] = [str(repo / mounts.get(f, f)) for f in config.get("rule_files", [])]
    with tempfile.TemporaryDirectory() as temp:
        path = Path(temp) / "prometheus.yml"
        path.write_text(yaml.safe_dump(config))
        result = subprocess.run([tools.promtool, "check", "config", str(path)], capture_output=True, text=True)
        if result.returncode != 0:
            report.error(PROMETHEUS_CONFIG, f"promtool check config:\n{(result.stdout + result.stderr).strip()}")


def check_adapter(repo, catalog, report):
    values = yaml.safe_load((repo / ADAPTER_VALUES).read_text())
    served = set()
    for kind in ("custom", "external"):
        for rule in values.get("rules", {}).get(kind, []) or []:
            where = f"{ADAPTER_VALUES} rules.{kind} {rule.get('name', {}).get('as')}"
            series_query = rule.get("seriesQuery", "")
            series = check_expression(series_query, catalog, where, report)
            if len(series) != 1:
                report.error(where, "seriesQuery must select exactly one metric")
                continue
            check_expression(adapter_to_promql(rule.get("metricsQuery", ""), next(iter(series))), catalog, where,
                             report)
            served.add(rule.get("name", {}).get("as") or next(iter(series)))
    return served


def check_scrape_format(path, tools, report):
    """promtool's lint of a worker scrape (naming conventions are warnings, format errors fail)."""
    with path.open() as scrape:
        result = subprocess.run([tools.promtool, "check", "metrics"], stdin=scrape, capture_output=True, text=True)
    for line in (result.stdout + result.stderr).splitlines():
        if "error while linting" in line:
            report.error(str(path), f"promtool check metrics: {line.strip()}")
        elif line.strip():
            report.warn(str(path), f"promtool check metrics: {line.strip()}")
