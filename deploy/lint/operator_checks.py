"""Rules of a render that keep an operator's budgets and boundaries true in a real cluster: the connection budget's
FLEET_* values match the autoscalers and the rollout surge, the API's memory limit follows its connection cap, the
proxies the API and the console believe are set and narrow, the console admits only its own proxy, the datastore
egress ports cover PgBouncer and managed Redis, the JWT alert watches the variable the API uses, and the namespace
is not deleted with the kustomization."""
import ipaddress
import math
import re

import yaml

# PostgreSQL (5432) or PgBouncer (6432); Redis (6379), TLS-only services (Azure 6380, Memorystore 6378), Sentinel.
DATASTORE_PORTS = {5432, 6432, 6379, 6378, 6380, 26379}
API_DATASTORE_PORTS = {5432, 6432}
CONNECTION_BUFFER = 64 * 1024          # bytes of libmicrohttpd memory pool per API connection
API_PROCESS_HEADROOM = 96 * 1024 ** 2  # the API process beside its connection buffers
API_DEFAULT_MAX_CONNECTIONS = 4096
CONSOLE_PROXY_LABELS = {"app.kubernetes.io/name": "oauth2-proxy", "app.kubernetes.io/instance": "countdown-console-proxy"}
NARROWEST_TRUSTED_PREFIX = 16          # a trusted proxy range wider than a /16 (IPv4) trusts whole networks
JWT_ALERT_VARIABLE = "API_JWT_KEYS"    # the variable CountdownJWTKeyReloadFailing watches (deploy/prometheus/alerts.yml)
MEMORY = re.compile(r"^(\d+)(Ki|Mi|Gi|K|M|G)?$")
UNITS = {None: 1, "K": 1000, "M": 1000 ** 2, "G": 1000 ** 3, "Ki": 1024, "Mi": 1024 ** 2, "Gi": 1024 ** 3}


def check(name, resources, report):
    config = next((r.get("data", {}) for r in resources
                   if r["kind"] == "ConfigMap" and r["metadata"]["name"] == "countdown-config"), {})
    by_name = {(r["kind"], r["metadata"]["name"]): r for r in resources}
    _budget(name, config, by_name, report)
    _api_memory(name, config, by_name.get(("Deployment", "countdown-api")), report)
    _trusted_proxies(name, config, report)
    _console_ingress(name, by_name.get(("NetworkPolicy", "countdown-console")), report)
    for component, ports in (("worker", DATASTORE_PORTS), ("api", API_DATASTORE_PORTS), ("console", DATASTORE_PORTS)):
        _datastore_ports(name, by_name.get(("NetworkPolicy", f"countdown-{component}")), ports, report)
    _jwt_variable(name, by_name.get(("Deployment", "countdown-api")), report)
    for resource in resources:
        if resource["kind"] == "Namespace":
            report.error(name, f"creates Namespace {resource['metadata']['name']}: `kubectl delete -k` would delete it "
                               "with its Secrets; apply namespace.yaml on its own (docs/deployment.md)")


def surge(deployment, replicas):
    """The pods a rolling update may add: maxSurge as a number, or a percentage of replicas rounded up (25 %)."""
    value = ((deployment["spec"].get("strategy") or {}).get("rollingUpdate") or {}).get("maxSurge", "25%")
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(replicas * int(value[:-1]) / 100)
    return int(value)


def _budget(name, config, by_name, report):
    where = f"{name} ConfigMap/countdown-config"
    workers = by_name.get(("HorizontalPodAutoscaler", "countdown-worker"))
    api_hpa = by_name.get(("HorizontalPodAutoscaler", "countdown-api"))
    api = by_name.get(("Deployment", "countdown-api"))
    console = by_name.get(("Deployment", "countdown-console"))
    if api and not api_hpa:
        report.error(name, "the API has no HorizontalPodAutoscaler (countdown-api)")
    expected = {}
    if workers and by_name.get(("Deployment", "countdown-worker")):
        expected["FLEET_WORKER_SURGE"] = surge(by_name[("Deployment", "countdown-worker")], workers["spec"]["maxReplicas"])
    if api_hpa:
        expected["FLEET_API_REPLICAS"] = api_hpa["spec"]["maxReplicas"]
        if api:
            expected["FLEET_API_SURGE"] = surge(api, api_hpa["spec"]["maxReplicas"])
    if console:
        replicas = console["spec"].get("replicas", 1)
        expected["FLEET_CONSOLE_REPLICAS"] = replicas
        expected["FLEET_CONSOLE_SURGE"] = surge(console, replicas)
    for variable, value in expected.items():
        if str(config.get(variable)) != str(value):
            report.error(where, f"{variable} {config.get(variable)!r} is not {value} (the manifests' autoscaler maximum "
                                "and rolling-update maxSurge): the connection budget would not count a rollout")


def memory_bytes(text):
    match = MEMORY.match(str(text))
    return int(match.group(1)) * UNITS[match.group(2)] if match else None


def _api_memory(name, config, api, report):
    if not api:
        return
    container = next(c for c in api["spec"]["template"]["spec"]["containers"] if c["name"] == "api")
    limit = memory_bytes(container.get("resources", {}).get("limits", {}).get("memory", ""))
    cap = int(config.get("API_MAX_CONNECTIONS", API_DEFAULT_MAX_CONNECTIONS))
    needed = cap * CONNECTION_BUFFER + API_PROCESS_HEADROOM
    if limit is None or limit < needed:
        report.error(f"{name} Deployment/countdown-api",
                     f"memory limit {container.get('resources', {}).get('limits', {}).get('memory')} is below "
                     f"API_MAX_CONNECTIONS {cap} x 64 KiB + 96 MiB = {needed // 1024 ** 2} MiB: lower the cap or "
                     "raise the limit")


def _trusted_proxies(name, config, report):
    where = f"{name} ConfigMap/countdown-config"
    for variable in ("API_TRUSTED_PROXIES", "CONSOLE_TRUSTED_PROXIES"):
        if variable not in config:
            report.error(where, f"sets no {variable} (the ingress' or the console proxy's range, docs/deployment.md)")
            continue
        for item in filter(None, (part.strip() for part in str(config[variable]).split(","))):
            try:
                network = ipaddress.ip_network(item, strict=False)
            except ValueError:
                report.error(where, f"{variable}: {item!r} is not an address or CIDR")
                continue
            narrowest = NARROWEST_TRUSTED_PREFIX if network.version == 4 else 64
            if network.prefixlen < narrowest:
                report.error(where, f"{variable} trusts {item}, a whole network: set the proxy pods' range")


def _console_ingress(name, policy, report):
    """Port 8090 only from the proxy's pods in the console's own namespace, chosen by name and instance."""
    if not policy:
        return
    for rule in policy["spec"].get("ingress", []):
        if 8090 not in {p.get("port") for p in rule.get("ports", [])}:
            continue
        for source in rule.get("from", []) or [{}]:
            labels = (source.get("podSelector") or {}).get("matchLabels") or {}
            if "namespaceSelector" in source or "ipBlock" in source or any(
                    labels.get(k) != v for k, v in CONSOLE_PROXY_LABELS.items()):
                report.error(f"{name} NetworkPolicy/countdown-console",
                             f"admits the console's pages from {source or 'anywhere'}: only pods labelled "
                             f"{CONSOLE_PROXY_LABELS} in the console's namespace")


def _datastore_ports(name, policy, wanted, report):
    if not policy:
        return
    allowed = {p.get("port") for rule in policy["spec"].get("egress", []) for p in rule.get("ports", [])}
    missing = wanted - allowed
    if missing:
        report.error(f"{name} NetworkPolicy/{policy['metadata']['name']}",
                     f"refuses datastore ports {sorted(missing)} (PgBouncer 6432, Memorystore 6378, Azure 6380, "
                     "Sentinel 26379): DATABASE_URL / REDIS_URL may name them")


def _jwt_variable(name, api, report):
    if not api:
        return
    container = next(c for c in api["spec"]["template"]["spec"]["containers"] if c["name"] == "api")
    if JWT_ALERT_VARIABLE not in {e["name"] for e in container.get("env", [])}:
        report.error(f"{name} Deployment/countdown-api",
                     f"does not set {JWT_ALERT_VARIABLE}, the variable CountdownJWTKeyReloadFailing watches: the alert "
                     "could never fire")


def check_namespace_file(name, directory, namespace, report):
    """An overlay with a namespace ships it beside itself (namespace.yaml, applied on its own), restricted."""
    path = directory / "namespace.yaml"
    if not namespace:
        return
    if not path.exists():
        report.error(name, f"sets namespace {namespace} but has no namespace.yaml to create it")
        return
    resource = yaml.safe_load(path.read_text())
    if resource.get("kind") != "Namespace" or resource["metadata"]["name"] != namespace:
        report.error(f"{name}/namespace.yaml", f"is not Namespace {namespace}")
    elif resource["metadata"].get("labels", {}).get("pod-security.kubernetes.io/enforce") != "restricted":
        report.error(f"{name}/namespace.yaml", "must enforce the restricted Pod Security Standard")
