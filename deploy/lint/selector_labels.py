"""The labels Prometheus selects Countdown's rules and monitors by are set in one place
(components/kube-prometheus-stack/selector-labels.yaml); every PrometheusRule, ServiceMonitor and PodMonitor of
a render must carry them, or kube-prometheus-stack silently loads none of them."""
import yaml

SELECTOR_LABELS = "deploy/kubernetes/components/kube-prometheus-stack/selector-labels.yaml"
MONITORING_KINDS = {"PrometheusRule", "ServiceMonitor", "PodMonitor"}
LABEL_PATH = "/metadata/labels/"


def selector_labels(repo):
    """The labels the component adds: its JSON patch's `add /metadata/labels/<name>` operations."""
    labels = {}
    for op in yaml.safe_load((repo / SELECTOR_LABELS).read_text()) or []:
        path = str(op.get("path", ""))
        if op.get("op") == "add" and path.startswith(LABEL_PATH):
            name = path[len(LABEL_PATH):].replace("~1", "/").replace("~0", "~")
            labels[name] = str(op.get("value"))
    return labels


def check(repo, name, resources, report):
    """Every monitoring object of the render carries the selector labels; returns how many were checked."""
    wanted = selector_labels(repo)
    if not wanted:
        report.error(SELECTOR_LABELS, "adds no label (expected `- op: add` with path /metadata/labels/<name>)")
        return 0
    checked = 0
    for resource in resources:
        if resource.get("kind") not in MONITORING_KINDS:
            continue
        checked += 1
        labels = (resource.get("metadata") or {}).get("labels") or {}
        missing = {k: v for k, v in wanted.items() if str(labels.get(k)) != v}
        if missing:
            shown = ", ".join(f"{k}: {v}" for k, v in sorted(missing.items()))
            report.error(name, f"{resource['kind']} {resource['metadata'].get('name')} lacks the selector labels "
                               f"{shown} ({SELECTOR_LABELS}): add components/kube-prometheus-stack after "
                               f"components/monitoring")
    return checked
