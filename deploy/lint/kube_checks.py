"""Kubernetes manifests: every file and every kustomization's output against the API schemas, and the
rules of this deployment (probes, drain time, security context, references, network policy)."""

import re

import yaml

import kube_schema
import kubectl_kustomize
from config_variables import (DEFAULT_API_ADDR, DEFAULT_HTTP_ADDR, DEFAULT_SHUTDOWN_GRACE_SECONDS,
                              check_environment, port_of)

KUBERNETES = "deploy/kubernetes"
SECRETS = f"{KUBERNETES}/secrets"
NOT_MANIFESTS = {f"{KUBERNETES}/components/monitoring/prometheus-adapter-values.yaml"}
# DNS, PostgreSQL and PgBouncer, Redis (plain, Memorystore TLS, TLS-only, Sentinel), push
WORKER_EGRESS_PORTS = {53, 5432, 6432, 6379, 6378, 6380, 26379, 443}
PUBLIC_ONLY_EXCEPT = {"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16"}
WORKLOAD_KINDS = {"Deployment", "Job", "StatefulSet", "DaemonSet"}


def kustomization_dirs(repo, components=True):
    """Directories with a kustomization file; without components (`kind: Component`) when asked."""
    return sorted(p.parent for p in (repo / KUBERNETES).rglob("kustomization.yaml")
                  if components or not kubectl_kustomize.is_component(p.parent))


def manifest_files(repo):
    """Every YAML file under deploy/kubernetes that holds whole objects: not kustomizations, not patches."""
    patches = set()
    for directory in kustomization_dirs(repo):
        spec = yaml.safe_load((directory / "kustomization.yaml").read_text())
        patches |= {(directory / p["path"]).resolve() for p in spec.get("patches", []) if isinstance(p, dict)}
    files = []
    for path in sorted((repo / KUBERNETES).rglob("*.y*ml")):
        relative = str(path.relative_to(repo))
        if path.name.startswith("kustomization.") or path.resolve() in patches or relative in NOT_MANIFESTS:
            continue
        files.append(path)
    return files


def validate_schemas(repo, resources_by_source, report):
    """Strict validation against every Kubernetes version in VALIDATION_VERSIONS; custom resources get the
    structural checks of check_custom_resource."""
    count = 0
    for source, resources in resources_by_source:
        for resource in resources:
            where = f"{source} {resource.get('kind')}/{resource.get('metadata', {}).get('name')}"
            for version in kube_schema.VALIDATION_VERSIONS:
                try:
                    problem = kube_schema.validate(resource, version)
                except kube_schema.SchemaNotFound:
                    check_custom_resource(resource, where, report)
                    break
                if problem:
                    report.error(where, f"Kubernetes {version}: {problem}")
            count += 1
    return count


def check_custom_resource(resource, where, report):
    kind = resource.get("kind")
    spec = resource.get("spec", {})
    if resource.get("apiVersion") != "monitoring.coreos.com/v1" or kind not in ("ServiceMonitor", "PodMonitor", "PrometheusRule"):
        report.error(where, f"no schema for {resource.get('apiVersion')} {kind}")
        return
    if not resource.get("metadata", {}).get("name"):
        report.error(where, "metadata.name is missing")
    if kind in ("ServiceMonitor", "PodMonitor"):
        if not spec.get("selector", {}).get("matchLabels"):
            report.error(where, "spec.selector.matchLabels is missing")
        for endpoint in spec.get("endpoints" if kind == "ServiceMonitor" else "podMetricsEndpoints", []):
            if not endpoint.get("port") or set(endpoint) - {"port", "path", "interval", "scrapeTimeout", "scheme"}:
                report.error(where, f"endpoint {endpoint}: needs port; knows port, path, interval, scrapeTimeout, scheme")
    if kind == "PrometheusRule" and not spec.get("groups"):
        report.error(where, "spec.groups is empty")


def load_file(path):
    return [r for r in yaml.safe_load_all(path.read_text()) if r]


OPTIONAL_KEY = re.compile(r"^\s*#\s*([A-Z][A-Z0-9_]*):\s", re.MULTILINE)


def secret_templates(repo):
    """Secret name -> keys, from deploy/kubernetes/secrets. Keys a template shows only in a comment
    (`# KEY: value`) are optional: listed as `KEY?`, for secretKeyRefs with `optional: true`."""
    secrets = {}
    for path in sorted((repo / SECRETS).glob("*.yaml")):
        optional = {key + "?" for key in OPTIONAL_KEY.findall(path.read_text())}
        for resource in load_file(path):
            if resource.get("kind") == "Secret":
                data = {**resource.get("stringData", {}), **resource.get("data", {})}
                secrets[resource["metadata"]["name"]] = set(data) | optional
    return secrets


def check_secret_templates(repo, report):
    for path in sorted((repo / SECRETS).glob("*.yaml")):
        for resource in load_file(path):
            where = str(path.relative_to(repo))
            if resource.get("kind") != "Secret":
                report.error(where, "holds something else than a Secret template")
                continue
            for key, value in resource.get("stringData", {}).items():
                if "REPLACE_ME" not in str(value):
                    report.error(where, f"{key} holds a value without REPLACE_ME: templates carry no real secret")
            if resource.get("data"):
                report.error(where, "use stringData with REPLACE_ME placeholders, not data")


def check_render(name, resources, secrets, image_executables, adapter_metrics, namespace, report):
    index = {(r["kind"], r["metadata"]["name"]): r for r in resources}
    config = {}
    for resource in resources:
        if resource["kind"] == "ConfigMap":
            config[resource["metadata"]["name"]] = resource.get("data", {})
    workloads = [r for r in resources if r["kind"] in WORKLOAD_KINDS]
    hpa_targets = {r["spec"]["scaleTargetRef"]["name"] for r in resources if r["kind"] == "HorizontalPodAutoscaler"}
    images = set()
    for workload in workloads:
        _check_workload(name, workload, config, secrets, image_executables, hpa_targets, images, report)
    if len(images) > 1:
        report.error(name, f"workloads run different images: {sorted(images)}")
    if name != "base":
        for image in images:
            _, tag, digest = kubectl_kustomize.split_image(image)
            if not digest and tag in ("", "latest"):
                report.error(name, f"image {image} is not pinned to a tag or digest")
    for resource in resources:
        where = f"{name} {resource['kind']}/{resource['metadata']['name']}"
        kind = resource["kind"]
        if kind == "Service":
            _check_service(where, resource, workloads, report)
        elif kind == "PodDisruptionBudget":
            if not _selected(resource["spec"]["selector"].get("matchLabels", {}), workloads):
                report.error(where, "selects no workload")
        elif kind == "HorizontalPodAutoscaler":
            _check_hpa(where, resource, index, adapter_metrics, report)
        elif kind == "ServiceMonitor":
            _check_service_monitor(where, resource, resources, report)
        elif kind == "PodMonitor":
            _check_pod_monitor(where, resource, workloads, report)
        elif kind == "Namespace":
            if namespace and resource["metadata"]["name"] != namespace:
                report.error(where, f"is not the kustomization's namespace {namespace}")
            if resource["metadata"].get("labels", {}).get("pod-security.kubernetes.io/enforce") != "restricted":
                report.error(where, "must enforce the restricted Pod Security Standard")
    _check_network_policies(name, resources, workloads, report)
    _check_connection_budget(name, resources, config, report)


def _check_connection_budget(name, resources, config, report):
    """The ConfigMap's FLEET_MAX_WORKERS (what the worker's start-up connection budget check assumes) is the
    autoscaler's maxReplicas, and DATABASE_POOL_SIZE is set; operator_checks checks the other FLEET_* values."""
    data = config.get("countdown-config", {})
    hpa = next((r for r in resources if r["kind"] == "HorizontalPodAutoscaler"
                and r["spec"]["scaleTargetRef"]["name"] == "countdown-worker"), None)
    where = f"{name} ConfigMap/countdown-config"
    if "DATABASE_POOL_SIZE" not in data:
        report.error(where, "sets no DATABASE_POOL_SIZE (docs/operations.md, Connection budget)")
    if hpa and str(data.get("FLEET_MAX_WORKERS")) != str(hpa["spec"].get("maxReplicas")):
        report.error(where, f"FLEET_MAX_WORKERS {data.get('FLEET_MAX_WORKERS')!r} is not the worker autoscaler's "
                            f"maxReplicas {hpa['spec'].get('maxReplicas')}")


def _pod(workload):
    return workload["spec"]["template"]


def _program(container):
    argv = container.get("args") or container.get("command") or []
    return argv[0] if argv else None


def _check_workload(name, workload, config, secrets, image_executables, hpa_targets, images, report):
    where = f"{name} {workload['kind']}/{workload['metadata']['name']}"
    template = _pod(workload)
    spec = template["spec"]
    labels = template.get("metadata", {}).get("labels", {})
    selector = workload["spec"].get("selector", {}).get("matchLabels", {})
    if workload["kind"] != "Job" and not selector:
        report.error(where, "has no selector.matchLabels")
    if any(labels.get(k) != v for k, v in selector.items()):
        report.error(where, f"selector {selector} does not match the pod labels {labels}")
    if workload["metadata"]["name"] in hpa_targets and "replicas" in workload["spec"]:
        report.error(where, "sets replicas although an autoscaler owns them (every apply would reset the count)")
    pod_security = spec.get("securityContext", {})
    if pod_security.get("runAsNonRoot") is not True:
        report.error(where, "pod securityContext.runAsNonRoot must be true")
    if pod_security.get("runAsUser", 1) == 0:
        report.error(where, "runs as root")
    if pod_security.get("seccompProfile", {}).get("type") not in ("RuntimeDefault", "Localhost"):
        report.error(where, "pod securityContext.seccompProfile must be RuntimeDefault")
    if spec.get("automountServiceAccountToken") is not False:
        report.error(where, "must not mount a service account token (automountServiceAccountToken: false)")
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    for volume in volumes.values():
        secret = volume.get("secret")
        if secret and secret["secretName"] not in secrets:
            report.error(where, f"volume {volume['name']} uses Secret {secret['secretName']}, which no template in "
                                f"{SECRETS} defines")
    init_names = {c["name"] for c in spec.get("initContainers", [])}
    for container in spec.get("containers", []) + spec.get("initContainers", []):
        cwhere = f"{where} container {container['name']}"
        images.add(container.get("image"))
        _check_container_security(cwhere, container, volumes, report)
        program = _program(container)
        if program not in image_executables:
            report.warn(cwhere, f"runs {program}, which Package.swift does not (yet) build into the image")
        env = _environment(cwhere, container, config, secrets, report)
        check_environment(env, program, cwhere, report)
        for mount in container.get("volumeMounts", []):
            if mount["name"] not in volumes:
                report.error(cwhere, f"mounts undefined volume {mount['name']}")
        for key, value in env.items():
            if key.endswith(("_FILE", "CREDENTIALS")) and value.startswith("/") and not any(
                    value.startswith(m["mountPath"].rstrip("/") + "/") for m in container.get("volumeMounts", [])
                    if "secret" in volumes.get(m["name"], {})):
                report.error(cwhere, f"{key}={value} is not inside a mounted Secret")
        if program == "countdown-worker":
            _check_serving(cwhere, spec, container, env, "HTTP_ADDR", DEFAULT_HTTP_ADDR, report)
        elif program == "countdown-api":
            _check_serving(cwhere, spec, container, env, "API_ADDR", DEFAULT_API_ADDR, report)
        elif program == "countdown-admin":
            if container["name"] in init_names:
                if (container.get("args") or container.get("command")) != ["countdown-admin", "migrate"]:
                    report.error(cwhere, "an admin init container may only run countdown-admin migrate")
            elif workload["kind"] != "Job" or spec.get("restartPolicy") not in ("Never", "OnFailure"):
                report.error(cwhere, "the admin command runs as an init container (migrate) or a Job with restartPolicy "
                                     "Never or OnFailure")


def _check_container_security(where, container, volumes, report):
    security = container.get("securityContext", {})
    if security.get("allowPrivilegeEscalation") is not False:
        report.error(where, "securityContext.allowPrivilegeEscalation must be false")
    if security.get("readOnlyRootFilesystem") is not True:
        report.error(where, "securityContext.readOnlyRootFilesystem must be true")
    if security.get("privileged"):
        report.error(where, "must not be privileged")
    if "ALL" not in security.get("capabilities", {}).get("drop", []):
        report.error(where, "securityContext.capabilities.drop must contain ALL")
    if security.get("capabilities", {}).get("add"):
        report.error(where, "must not add capabilities")
    resources = container.get("resources", {})
    for section in ("requests", "limits"):
        for resource in ("cpu", "memory"):
            if resource not in resources.get(section, {}):
                report.error(where, f"resources.{section}.{resource} is not set")
    if not any(m["mountPath"] == "/tmp" and "emptyDir" in volumes.get(m["name"], {})
               for m in container.get("volumeMounts", [])):
        report.error(where, "a read-only root file system needs an emptyDir at /tmp")


def _environment(where, container, config, secrets, report):
    """The container's environment: envFrom ConfigMaps (which must exist) and env, checking Secret refs."""
    env = {}
    for source in container.get("envFrom", []):
        if "configMapRef" in source:
            name = source["configMapRef"]["name"]
            if name not in config:
                report.error(where, f"envFrom ConfigMap {name}, which the render does not contain")
            env.update({k: str(v) for k, v in config.get(name, {}).items()})
        else:
            report.error(where, "envFrom Secrets hide which keys exist: use env with secretKeyRef")
    for variable in container.get("env", []):
        value_from = variable.get("valueFrom", {})
        if "secretKeyRef" in value_from:
            ref = value_from["secretKeyRef"]
            keys = secrets.get(ref["name"], set())
            if ref["key"] not in keys and not (ref.get("optional") is True and ref["key"] + "?" in keys):
                report.error(where, f"{variable['name']} reads key {ref['key']} of Secret {ref['name']}, which no "
                                    f"template in {SECRETS} defines")
            env[variable["name"]] = "(secret)"
        elif "configMapKeyRef" in value_from:
            ref = value_from["configMapKeyRef"]
            if ref["key"] not in config.get(ref["name"], {}):
                report.error(where, f"{variable['name']} reads a missing ConfigMap key {ref['name']}/{ref['key']}")
            env[variable["name"]] = str(config.get(ref["name"], {}).get(ref["key"], ""))
        else:
            env[variable["name"]] = str(variable.get("value", ""))
    return env


def _check_serving(where, spec, container, env, address_variable, default, report):
    """Probes on the process's own port (/readyz, /healthz), and a drain that fits the grace period."""
    port = port_of(env.get(address_variable, default))
    ports = {p.get("name"): p["containerPort"] for p in container.get("ports", [])}
    if port not in ports.values():
        report.error(where, f"does not declare containerPort {port} ({address_variable})")
    for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
        http = container.get(probe, {}).get("httpGet")
        if not http:
            report.error(where, f"needs an httpGet {probe} on {path}")
            continue
        probe_port = ports.get(http["port"], http["port"])
        if http.get("path") != path or probe_port != port:
            report.error(where, f"{probe} must GET {path} on port {port}, gets {http.get('path')} on {http['port']}")
    pre_stop = container.get("lifecycle", {}).get("preStop")
    if not pre_stop:
        report.error(where, "needs a preStop hook so endpoints update before SIGTERM")
        pre_stop_seconds = 0
    else:
        command = pre_stop.get("exec", {}).get("command", [])
        pre_stop_seconds = (int(command[-1]) if command and str(command[-1]).isdigit() and "sleep" in command[0]
                            else pre_stop.get("sleep", {}).get("seconds", 0))
    grace = int(env.get("SHUTDOWN_GRACE_SECONDS", DEFAULT_SHUTDOWN_GRACE_SECONDS))
    termination = spec.get("terminationGracePeriodSeconds", 30)
    if termination <= pre_stop_seconds + grace:
        report.error(where, f"terminationGracePeriodSeconds {termination} must exceed preStop {pre_stop_seconds}s + "
                            f"SHUTDOWN_GRACE_SECONDS {grace}s")


def _selected(match_labels, workloads):
    return [w for w in workloads
            if match_labels and all(_pod(w).get("metadata", {}).get("labels", {}).get(k) == v
                                    for k, v in match_labels.items())]


def _check_service(where, service, workloads, report):
    targets = _selected(service["spec"].get("selector", {}), workloads)
    if not targets:
        report.error(where, "selects no pods")
        return
    for port in service["spec"].get("ports", []):
        target = port.get("targetPort", port["port"])
        for workload in targets:
            containers = _pod(workload)["spec"]["containers"]
            declared = {p.get("name") for c in containers for p in c.get("ports", [])} | {
                p["containerPort"] for c in containers for p in c.get("ports", [])}
            if target not in declared:
                report.error(where, f"targetPort {target} is not a port of {workload['metadata']['name']}")


def _check_hpa(where, hpa, index, adapter_metrics, report):
    target = hpa["spec"]["scaleTargetRef"]
    if (target["kind"], target["name"]) not in index:
        report.error(where, f"scales {target['kind']}/{target['name']}, which the render does not contain")
    if hpa["spec"].get("minReplicas", 1) > hpa["spec"]["maxReplicas"]:
        report.error(where, "minReplicas above maxReplicas")
    for metric in hpa["spec"].get("metrics", []):
        if metric["type"] == "External":
            name = metric["external"]["metric"]["name"]
            if name not in adapter_metrics:
                report.error(where, f"external metric {name} is not served by the Prometheus adapter rules "
                                    f"(serves {sorted(adapter_metrics)})")


def _check_service_monitor(where, monitor, resources, report):
    services = [r for r in resources if r["kind"] == "Service" and all(
        r["metadata"].get("labels", {}).get(k) == v for k, v in monitor["spec"]["selector"]["matchLabels"].items())]
    if not services:
        report.error(where, "selects no Service")
    for endpoint in monitor["spec"].get("endpoints", []):
        for service in services:
            if endpoint["port"] not in {p.get("name") for p in service["spec"]["ports"]}:
                report.error(where, f"port {endpoint['port']} is not a named port of Service "
                                    f"{service['metadata']['name']}")
        if endpoint.get("path", "/metrics") != "/metrics":
            report.error(where, "scrapes a path other than /metrics")


def _check_pod_monitor(where, monitor, workloads, report):
    targets = _selected(monitor["spec"]["selector"].get("matchLabels", {}), workloads)
    if not targets:
        report.error(where, "selects no workload")
    for endpoint in monitor["spec"].get("podMetricsEndpoints", []):
        for workload in targets:
            names = {p.get("name") for c in _pod(workload)["spec"]["containers"] for p in c.get("ports", [])}
            if endpoint["port"] not in names:
                report.error(where, f"port {endpoint['port']} is not a named port of {workload['metadata']['name']}")
        if endpoint.get("path", "/metrics") != "/metrics":
            report.error(where, "scrapes a path other than /metrics")


def _check_network_policies(name, resources, workloads, report):
    policies = [r for r in resources if r["kind"] == "NetworkPolicy"]
    if not policies:
        report.error(name, "has no NetworkPolicy")
        return
    for workload in workloads:
        where = f"{name} {workload['kind']}/{workload['metadata']['name']}"
        labels = _pod(workload).get("metadata", {}).get("labels", {})
        applying = [p for p in policies if all(labels.get(k) == v for k, v in
                                               p["spec"]["podSelector"].get("matchLabels", {}).items())]
        if not any("Egress" in p["spec"].get("policyTypes", []) for p in applying):
            report.error(where, "no NetworkPolicy restricts its egress")
        if any(_program(c) == "countdown-worker" for c in _pod(workload)["spec"]["containers"]):
            _check_worker_egress(where, applying, report)
        _check_metrics_ingress(where, workload, applying, report)


def _check_metrics_ingress(where, workload, policies, report):
    """The scraped port (`prometheus.io/port`) admits Prometheus's namespace only, never every source."""
    port = _pod(workload).get("metadata", {}).get("annotations", {}).get("prometheus.io/port")
    if port is None:
        return
    for policy in policies:
        for rule in policy["spec"].get("ingress", []):
            ports = {str(p.get("port")) for p in rule.get("ports", [])}
            if ports and port not in ports:
                continue
            sources = rule.get("from", [])
            if not sources or any(not s.get("namespaceSelector", {}).get("matchLabels") or "ipBlock" in s
                                  for s in sources):
                report.error(where, f"NetworkPolicy {policy['metadata']['name']} admits metrics port {port} from "
                                    "more than a labelled (monitoring) namespace")


def _check_worker_egress(where, policies, report):
    """Workers reach only DNS, PostgreSQL, Redis and HTTPS to public addresses (the push providers)."""
    for policy in policies:
        for rule in policy["spec"].get("egress", []):
            ports = {p.get("port") for p in rule.get("ports", [])}
            if not ports:
                report.error(where, f"NetworkPolicy {policy['metadata']['name']} allows egress on every port")
            extra = ports - WORKER_EGRESS_PORTS
            if extra:
                report.error(where, f"NetworkPolicy {policy['metadata']['name']} allows egress to ports {sorted(extra)}")
            if 443 in ports:
                blocks = [t.get("ipBlock") for t in rule.get("to", [])]
                if not blocks or any(b is None for b in blocks):
                    report.error(where, "HTTPS egress must be limited to ipBlocks of public addresses")
                for block in blocks:
                    if block and block["cidr"] == "0.0.0.0/0" and not PUBLIC_ONLY_EXCEPT <= set(block.get("except", [])):
                        report.error(where, f"HTTPS egress to {block['cidr']} must except {sorted(PUBLIC_ONLY_EXCEPT)}")
