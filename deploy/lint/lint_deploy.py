"""scripts/lint-deploy: validates the container, compose and Kubernetes files and the observability
configuration without a Docker engine or a cluster. Run through scripts/lint-deploy, which provides the tools."""
import argparse
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

import compose_checks
import docs_checks
import image_checks
import kube_checks
import kubectl_kustomize
import observability_checks
import operator_checks
import release_checks
import selector_labels
import native_build
import runtime_libraries
from dockerfile import Dockerfile
from metrics_catalog import Catalog
from package_manifest import Manifest
from report import Report

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Tools:
    hadolint: str
    check_jsonschema: str
    yamllint: str
    promtool: str
    kubectl: str


def main():
    parser = argparse.ArgumentParser(prog="scripts/lint-deploy", description=__doc__)
    parser.add_argument("--metrics", type=Path, help="a Prometheus text scrape of a real worker to check "
                                                     "queries against (default: deploy/metrics.txt)")
    parser.add_argument("--render", metavar="DIR", help="print the rendered kustomization in DIR and exit")
    parser.add_argument("--build", action="store_true", help="also run the Dockerfile's build stage natively "
                                                              "(release builds: minutes)")
    parser.add_argument("--tools", nargs=5, metavar=("HADOLINT", "CHECK_JSONSCHEMA", "YAMLLINT", "PROMTOOL", "KUBECTL"),
                        required=True)
    args = parser.parse_args()
    tools = Tools(*args.tools)
    if args.render:
        try:
            print(kubectl_kustomize.render(tools.kubectl, args.render), end="")
        except kubectl_kustomize.KustomizeError as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
        return 0
    report = Report()
    manifest = Manifest((REPO / "Package.swift").read_text())
    executables = image_checks.image_executables(REPO, manifest)
    development = image_checks.development_executables(REPO)

    section(report, "Dockerfile (hadolint, Package.swift packages and products)",
            lambda: image_checks.check_dockerfile(REPO, manifest, tools, report) or
            f"image holds {', '.join(executables)}; the development image {', '.join(development)}")
    section(report, ".dockerignore", lambda: image_checks.check_dockerignore(REPO, report))
    section(report, "shared libraries of the built executables against the runtime stage",
            lambda: runtime_libraries.check(REPO, executables, _runtime_packages(), report))
    section(report, "shared libraries of the development executables against the development stage",
            lambda: runtime_libraries.check(REPO, development, _runtime_packages(image_checks.DEVELOPMENT_STAGE), report))
    if args.build:
        section(report, "Dockerfile build stage run natively", lambda: native_build.check(REPO, executables, report))
    section(report, "health check script", lambda: image_checks.check_healthcheck_script(REPO, report))
    section(report, "YAML syntax (yamllint)", lambda: _yamllint(tools, report))
    section(report, "compose specification (check-jsonschema)",
            lambda: f"{compose_checks.check_schema(REPO, tools, report)} documents")
    section(report, "compose rules (--scale, start order, configuration, fake FCM)",
            lambda: compose_checks.check_semantics(REPO, executables, development, report))
    section(report, "compose fake FCM account script", lambda: compose_checks.check_fake_account_script(REPO, report))

    catalog = _catalog(args.metrics, tools, report)
    adapter_metrics = set()

    def adapter():
        adapter_metrics.update(observability_checks.check_adapter(REPO, catalog, report))
        return f"serves {', '.join(sorted(adapter_metrics))}"

    section(report, "Prometheus adapter rules", adapter)
    section(report, "Kubernetes manifest files (kubernetes-validate, strict)", lambda: _manifest_files(report))
    section(report, "Kubernetes secret templates", lambda: kube_checks.check_secret_templates(REPO, report))
    secrets = kube_checks.secret_templates(REPO)
    for directory in kube_checks.kustomization_dirs(REPO, components=False):
        name = str(directory.relative_to(REPO / kube_checks.KUBERNETES))
        section(report, f"kustomization {name} (kubectl kustomize, schemas, rules)",
                lambda d=directory, n=name: _kustomization(tools, d, n, secrets, executables, adapter_metrics, report))
    section(report, "release version of the overlays and compose", lambda: release_checks.check(REPO, report))
    section(report, "scripts/set-version --release on a scratch copy", lambda: release_checks.check_set_version(REPO, report))
    section(report, "base images pinned or documented (scripts/pin-images --check)", lambda: _pin_images(report))
    section(report, "operator docs against the manifests and lint rules", lambda: docs_checks.check(REPO, report))
    section(report, "generated files up to date", lambda: observability_checks.check_generated(REPO, report))
    section(report, f"Grafana dashboard against {catalog.source}",
            lambda: f"{observability_checks.check_dashboard(REPO, catalog, report)} queries")
    section(report, f"alert rules (promtool check and unit tests) against {catalog.source}",
            lambda: f"{observability_checks.check_alerts(REPO, catalog, tools, report)} rules")
    section(report, "Prometheus configuration (promtool)",
            lambda: observability_checks.check_prometheus_config(REPO, tools, report))
    return report.summary()


def section(report, title, run):
    report.begin(title)
    try:
        detail = run()
    except Exception as error:  # a crash in one section must not hide the others
        report.error(title, f"{type(error).__name__}: {error}")
        detail = None
    report.end(detail if isinstance(detail, str) else "")


def _pin_images(report):
    result = subprocess.run([str(REPO / "scripts/pin-images"), "--check"], capture_output=True, text=True)
    lines = result.stdout.splitlines()
    for line in lines:
        if "not in" in line:
            report.error("scripts/pin-images --check", line)
    if result.returncode != 0 and not any("not in" in line for line in lines):
        report.error("scripts/pin-images --check", (result.stdout + result.stderr).strip())
    pinned = sum(line.startswith("pinned") for line in lines)
    return f"{pinned} pinned, {len(lines) - pinned} documented in deploy/unpinned-images.txt"


def _runtime_packages(stage=image_checks.RUNTIME_STAGE):
    dockerfile = Dockerfile((REPO / "Dockerfile").read_text())
    runtime = dockerfile.stage(stage)
    return image_checks.installed_packages(dockerfile, runtime) if runtime else []


def _yamllint(tools, report):
    files = [str(p) for p in sorted((REPO / "deploy").rglob("*.y*ml"))]
    files += [str(REPO / compose_checks.BASE)] + [str(REPO / f) for f in compose_checks.OVERRIDES]
    result = subprocess.run([tools.yamllint, "--strict", "-f", "parsable", "-c", str(REPO / "deploy/lint/yamllint.yaml"),
                             *files], capture_output=True, text=True)
    for line in (result.stdout + result.stderr).splitlines():
        if line.strip():
            report.error("yamllint", line.replace(str(REPO) + "/", ""))
    return f"{len(files)} files"


def _catalog(scrape, tools, report):
    report.begin("metric catalog")
    listed = Catalog.from_list(REPO / "deploy/metrics.txt")
    catalog = listed
    if scrape:
        try:
            observability_checks.check_scrape_format(scrape, tools, report)
            catalog = Catalog.from_scrape(scrape)
        except (OSError, ValueError) as error:
            report.error(str(scrape), f"{error} (checking against {listed.source} instead)")
            report.end()
            return listed.merged(Catalog.from_list(REPO / "deploy/metrics-external.txt"))
        for name in sorted(set(listed.metrics) - set(catalog.metrics)):
            report.warn("deploy/metrics.txt", f"{name} is listed but not in the scrape {scrape}")
        for name in sorted(set(catalog.metrics) - set(listed.metrics)):
            if name.startswith("countdown_"):
                report.warn("deploy/metrics.txt", f"{name} is in the scrape but not listed")
    report.end(f"{len(catalog.metrics)} series from {catalog.source}")
    return catalog.merged(Catalog.from_list(REPO / "deploy/metrics-external.txt"))


def _manifest_files(report):
    sources = []
    for path in kube_checks.manifest_files(REPO):
        sources.append((str(path.relative_to(REPO)), kube_checks.load_file(path)))
    count = kube_checks.validate_schemas(REPO, sources, report)
    return f"{count} objects in {len(sources)} files, Kubernetes {' and '.join(kube_checks.kube_schema.VALIDATION_VERSIONS)}"


def _kustomization(tools, directory, name, secrets, executables, adapter_metrics, report):
    try:
        resources = kubectl_kustomize.build(tools.kubectl, directory)
    except kubectl_kustomize.KustomizeError as error:
        report.error(name, str(error))
        return None
    kube_checks.validate_schemas(REPO, [(name, resources)], report)
    spec = yaml.safe_load(kubectl_kustomize.kustomization_file(directory).read_text())
    kube_checks.check_render(name, resources, secrets, executables, adapter_metrics, spec.get("namespace"), report)
    operator_checks.check(name, resources, report)
    operator_checks.check_namespace_file(name, directory, spec.get("namespace"), report)
    monitoring = selector_labels.check(REPO, name, resources, report)
    return f"{len(resources)} objects" + (f", {monitoring} labelled for Prometheus' selectors" if monitoring else "")


if __name__ == "__main__":
    sys.exit(main())
