"""alerts.yml wrapped into the PrometheusRule of components/monitoring (Prometheus Operator), written by
deploy/generate.py."""
from pathlib import Path

SOURCE = Path(__file__).resolve().with_name("alerts.yml")

HEADER = """\
# Generated from deploy/prometheus/alerts.yml by deploy/generate.py: edit alerts.yml, not this file.
# Your Prometheus must select it: components/kube-prometheus-stack adds the labels its ruleSelector expects.
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: countdown
  labels:
    app.kubernetes.io/name: countdown
spec:
"""


def render():
    lines = SOURCE.read_text().splitlines()
    body = [line for line in lines if not line.startswith("#")]
    while body and not body[0].strip():
        body.pop(0)
    return HEADER + "".join(("  " + line if line.strip() else "") + "\n" for line in body)
