#!/usr/bin/env python3
"""Writes the deployment files that are generated from others:

    deploy/grafana/countdown.json                            from deploy/grafana/dashboard.py
    deploy/kubernetes/components/monitoring/prometheusrule.yaml from deploy/prometheus/alerts.yml

    python3 deploy/generate.py          # rewrite them
    python3 deploy/generate.py --check  # exit 1 if any is out of date (scripts/lint-deploy)
"""
import importlib.util
import sys
from pathlib import Path

DEPLOY = Path(__file__).resolve().parent
GENERATORS = {
    DEPLOY / "grafana" / "countdown.json": DEPLOY / "grafana" / "dashboard.py",
    DEPLOY / "kubernetes" / "components" / "monitoring" / "prometheusrule.yaml": DEPLOY / "prometheus" / "prometheusrule.py",
}


def render(generator):
    spec = importlib.util.spec_from_file_location(generator.stem, generator)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.render()


def main(argv):
    check = argv[1:] == ["--check"]
    if argv[1:] and not check:
        print("usage: deploy/generate.py [--check]", file=sys.stderr)
        return 2
    stale = []
    for out, generator in GENERATORS.items():
        text = render(generator)
        if check:
            if not out.exists() or out.read_text() != text:
                stale.append(out.relative_to(DEPLOY.parent))
        else:
            out.write_text(text)
    for path in stale:
        print(f"{path} is out of date: run python3 deploy/generate.py", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
