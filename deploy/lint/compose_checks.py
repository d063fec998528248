"""docker-compose.yml and its override files: the compose specification, `--scale` rules, start order,
configuration names, the fake FCM wiring and the observability profile."""
import json
import os
import subprocess
import tempfile
from pathlib import Path

import yaml

from compose_model import InterpolationError, duration_seconds, environment, interpolate, merge
from config_variables import DEFAULT_SHUTDOWN_GRACE_SECONDS, check_environment, port_of

BASE = "docker-compose.yml"
OVERRIDES = ["docker-compose.override.example.yml", "deploy/compose/apns.yml", "deploy/compose/redis-tls.yml"]
SCALED = "worker"
SECRETS_DIR = "deploy/compose/secrets"


def load(repo, name):
    return yaml.safe_load((repo / name).read_text())


def variants(repo):
    """(name, model) of the base file alone and of the base merged with each override file."""
    base = load(repo, BASE)
    yield BASE, base
    for name in OVERRIDES:
        yield f"{BASE} + {name}", merge(base, load(repo, name))


def check_schema(repo, tools, report):
    """Every file, raw and interpolated, and every merged variant against the compose specification."""
    with tempfile.TemporaryDirectory() as temp:
        files = []
        for name in [BASE, *OVERRIDES]:
            files.append(str(repo / name))
        for index, (name, model) in enumerate(variants(repo)):
            required = set()
            try:
                resolved = interpolate(model, {}, required)
            except InterpolationError as error:
                report.error(name, str(error))
                continue
            path = Path(temp) / f"variant-{index}.json"
            path.write_text(json.dumps(resolved))
            files.append(str(path))
            if required:
                report.note(f"{name}: needs {', '.join(sorted(required))} from the environment")
        result = subprocess.run([tools.check_jsonschema, "--builtin-schema", "vendor.compose-spec", *files],
                                capture_output=True, text=True)
        if result.returncode != 0:
            for line in (result.stdout + result.stderr).splitlines():
                if line.strip():
                    report.error("compose", f"check-jsonschema: {line.strip()}")
    return len(files)


def check_semantics(repo, image_executables, development_executables, report):
    for name, model in variants(repo):
        model = interpolate(model, {}, set())
        services = model.get("services", {})
        _check_scaling(name, services, report)
        _check_order(name, services, report)
        _check_app_services(name, services, image_executables, development_executables, report)
        _check_references(repo, name, model, services, report)
    model = interpolate(load(repo, BASE), {}, set())
    services = model["services"]
    _check_datastores(services, report)
    _check_limits(services, report)
    _check_required_secrets(load(repo, BASE), report)
    _check_fake_fcm(services, report)
    _check_console_secret(repo, services, report)
    _check_exporters(repo, services, report)
    _check_observability(repo, services, report)


def _check_scaling(name, services, report):
    where = f"{name} services.{SCALED}"
    worker = services.get(SCALED)
    if worker is None:
        report.error(name, f"no '{SCALED}' service")
        return
    for key in ("container_name", "hostname", "ports"):
        if key in worker:
            report.error(where, f"has {key}: `docker compose up --scale {SCALED}=N` needs every replica to differ "
                                "(use expose for the metrics port)")
    if worker.get("network_mode") == "host":
        report.error(where, "network_mode: host breaks --scale (one port per host)")
    for volume in worker.get("volumes", []):
        if isinstance(volume, str) and not volume.endswith(":ro") and volume.split(":")[0] not in ("", "/tmp"):
            report.error(where, f"volume {volume} is writable by every replica: mount it :ro")
    grace = int(environment(worker).get("SHUTDOWN_GRACE_SECONDS", DEFAULT_SHUTDOWN_GRACE_SECONDS))
    stop = duration_seconds(worker.get("stop_grace_period", "10s"))
    if stop <= grace:
        report.error(where, f"stop_grace_period {stop:g}s must exceed SHUTDOWN_GRACE_SECONDS {grace}s, or Docker "
                            "kills workers in the middle of their drain")
    for service_name, service in services.items():
        if "container_name" in service:
            report.error(f"{name} services.{service_name}", "container_name prevents two projects (and scaling)")


def _check_order(name, services, report):
    for service_name, service in services.items():
        depends = service.get("depends_on", {})
        if isinstance(depends, list):
            depends = {d: {"condition": "service_started"} for d in depends}
        for target, spec in depends.items():
            where = f"{name} services.{service_name}.depends_on.{target}"
            if target not in services:
                report.error(where, "no such service")
                continue
            condition = spec.get("condition", "service_started")
            other = services[target]
            if condition == "service_healthy" and (other.get("healthcheck") or {}).get("disable"):
                report.error(where, "waits for health, but the target's healthcheck is disabled")
            if condition == "service_completed_successfully" and other.get("restart", "no") not in ("no", "on-failure"):
                report.error(where, "waits for completion of a service that restarts")
    for service_name in ("worker", "api"):
        service = services.get(service_name, {})
        depends = service.get("depends_on", {})
        if isinstance(depends, list) or depends.get("migrate", {}).get("condition") != "service_completed_successfully":
            report.error(f"{name} services.{service_name}", "must wait for migrate: "
                                                             "condition: service_completed_successfully")
    migrate = services.get("migrate", {})
    if migrate.get("command", [None])[:2] != ["countdown-admin", "migrate"]:
        report.error(f"{name} services.migrate", "must run `countdown-admin migrate`")
    if migrate.get("restart", "no") != "no":
        report.error(f"{name} services.migrate", "is a one-shot: restart must be \"no\"")
    if (migrate.get("depends_on", {}).get("postgres") or {}).get("condition") != "service_healthy":
        report.error(f"{name} services.migrate", "must wait for postgres: condition: service_healthy")


# The Dockerfile's stage of the development image (the fake FCM), and the services that may run it.
DEVELOPMENT_TARGET = "development"
DEVELOPMENT_SERVICES = {"fcm-account", "fake-fcm"}


def _development(service):
    build = service.get("build")
    return isinstance(build, dict) and build.get("target") == DEVELOPMENT_TARGET


def _check_app_services(name, services, image_executables, development_executables, report):
    """The production image runs the production commands, one build for all; the development image (the fake FCM)
    runs only in the development services, and only development executables."""
    images = {}
    for service_name, service in services.items():
        where = f"{name} services.{service_name}"
        development = _development(service)
        if development and service_name not in DEVELOPMENT_SERVICES:
            report.error(where, f"runs the development image (target {DEVELOPMENT_TARGET}): only "
                                f"{', '.join(sorted(DEVELOPMENT_SERVICES))} may")
        if service_name in DEVELOPMENT_SERVICES and service.get("build") and not development:
            report.error(where, f"must build the development image (target {DEVELOPMENT_TARGET}): the production image "
                                "holds no fake FCM")
        command = service.get("command")
        if not isinstance(command, list) or not command or not str(command[0]).startswith("countdown-"):
            continue
        if development:
            if command[0] not in development_executables:
                report.error(where, f"runs {command[0]}, which the development image does not hold "
                                    f"({', '.join(development_executables)})")
            if not service.get("read_only") or "ALL" not in service.get("cap_drop", []):
                report.error(where, "runs the development image without read_only: true and cap_drop: [ALL]")
            continue
        images.setdefault((service.get("image"), json.dumps(service.get("build"), sort_keys=True)), []).append(
            service_name)
        if command[0] in development_executables:
            report.error(where, f"runs {command[0]} on the production image, which does not hold it: build target "
                                f"{DEVELOPMENT_TARGET}")
        elif command[0] not in image_executables:
            report.warn(where, f"runs {command[0]}, which Package.swift does not (yet) build into the image")
        check_environment(environment(service), command[0], where, report)
        if not service.get("read_only"):
            report.error(where, "runs the countdown image without read_only: true")
        if "ALL" not in service.get("cap_drop", []):
            report.error(where, "must drop all capabilities (cap_drop: [ALL])")
    if len(images) > 1:
        report.error(name, f"countdown services use different images or builds: {list(images.values())}")


def _check_references(repo, name, model, services, report):
    volumes = set((model.get("volumes") or {}).keys())
    secrets = model.get("secrets") or {}
    for service_name, service in services.items():
        where = f"{name} services.{service_name}"
        for volume in service.get("volumes", []):
            source = volume.split(":")[0] if isinstance(volume, str) else volume.get("source", "")
            if source.startswith((".", "/")):
                if not (repo / source).exists():
                    report.error(where, f"bind-mounts {source}, which does not exist")
            elif source and source not in volumes:
                report.error(where, f"uses volume {source}, not declared under volumes:")
        for secret in service.get("secrets", []):
            secret_name = secret if isinstance(secret, str) else secret.get("source")
            if secret_name not in secrets:
                report.error(where, f"uses secret {secret_name}, not declared under secrets:")
    ignore_file = repo / SECRETS_DIR / ".gitignore"
    for secret_name, secret in secrets.items():
        file = secret.get("file", "")
        if not os.path.normpath(file).startswith(SECRETS_DIR + "/"):
            report.error(f"{name} secrets.{secret_name}", f"file {file} must live in {SECRETS_DIR}/ (ignored by git "
                                                          "and by the image build)")
        if not ignore_file.exists() or "*" not in ignore_file.read_text().split():
            report.error(SECRETS_DIR, "needs a .gitignore that ignores everything but itself and the README")


def _check_datastores(services, report):
    redis = services.get("redis", {})
    command = " ".join(str(c) for c in redis.get("command", []))
    if "--appendonly yes" not in command:
        report.error("services.redis", "must run with AOF on (--appendonly yes)")
    if "--maxmemory-policy noeviction" not in command:
        report.error("services.redis", "must never evict keys (--maxmemory-policy noeviction): the queue lives there")
    if "--maxmemory " not in command:
        report.error("services.redis", "needs --maxmemory below its memory limit (a full Redis refuses writes, "
                                       "instead of being killed)")
    for store, data in (("postgres", "/var/lib/postgresql/data"), ("redis", "/data")):
        service = services.get(store, {})
        if not service.get("healthcheck", {}).get("test"):
            report.error(f"services.{store}", "needs a healthcheck (others wait for it)")
        if not any(str(v).endswith(":" + data) and not str(v).startswith((".", "/")) for v in service.get("volumes", [])):
            report.error(f"services.{store}", f"keeps {data} in a named volume")


def _check_limits(services, report):
    """Every service has CPU and memory limits and rotated logs: one runaway container must not take the host."""
    for name, service in services.items():
        limits = service.get("deploy", {}).get("resources", {}).get("limits", {})
        for resource in ("cpus", "memory"):
            if resource not in limits:
                report.error(f"services.{name}", f"needs deploy.resources.limits.{resource}")
        logging = service.get("logging", {})
        if logging.get("driver", "json-file") in ("json-file", "local") and "max-size" not in logging.get("options", {}):
            report.error(f"services.{name}", "needs logging.options.max-size (rotated logs)")


SECRET_VARIABLES = ("POSTGRES_PASSWORD", "API_JWT_SECRET", "CONSOLE_JWT_SECRET", "GRAFANA_ADMIN_PASSWORD")
DEVELOPMENT_ENV = "deploy/compose/development.env"


def _check_required_secrets(raw, report):
    """Secrets have no fallback in the base file: ${NAME:?message}, never ${NAME:-development value}."""
    text = json.dumps(raw)
    for name in SECRET_VARIABLES:
        if f"${{{name}:?" not in text:
            report.error(BASE, f"{name} must be required (${{{name}:?...}})")
        if f"${{{name}:-" in text or f"${{{name}-" in text:
            report.error(BASE, f"{name} must not fall back to a default (development values belong in "
                               "deploy/compose/development.env)")


EXPORTERS = {"redis-exporter": "redis-exporter:9121", "postgres-exporter": "postgres-exporter:9187"}


def _check_exporters(repo, services, report):
    """The datastore alerts need redis_exporter and postgres_exporter: both run in the observability profile and
    the compose Prometheus scrapes them."""
    scrape = yaml.safe_load((repo / "deploy/prometheus/prometheus.yml").read_text())
    targets = {t for job in scrape.get("scrape_configs", []) for c in job.get("static_configs", [])
               for t in c.get("targets", [])}
    for name, target in EXPORTERS.items():
        service = services.get(name)
        if not service:
            report.error(BASE, f"has no {name} service (the CountdownRedis* / CountdownPostgres* alerts need it)")
        elif "observability" not in service.get("profiles", []):
            report.error(f"services.{name}", "belongs in the observability profile, beside Prometheus")
        if target not in targets:
            report.error("deploy/prometheus/prometheus.yml", f"does not scrape {target}")


def _check_console_secret(repo, services, report):
    """The console verifies operator tokens with a secret of its own: with the API's, any app user's token (signed
    by the app's identity provider) would open the console."""
    console = environment(services.get("console", {}))
    api = environment(services.get("api", {}))
    value = str(console.get("CONSOLE_JWT_SECRET", ""))
    if value and ("API_JWT_SECRET" in value or value == str(api.get("API_JWT_SECRET"))):
        report.error("services.console", "CONSOLE_JWT_SECRET must be its own secret, never API_JWT_SECRET's")
    development = {}
    for line in (repo / DEVELOPMENT_ENV).read_text().splitlines():
        if "=" in line and not line.lstrip().startswith("#"):
            key, _, raw = line.partition("=")
            development[key.strip()] = raw.strip()
    if "CONSOLE_JWT_SECRET" not in development:
        report.error(DEVELOPMENT_ENV, "sets no CONSOLE_JWT_SECRET")
    elif development["CONSOLE_JWT_SECRET"] == development.get("API_JWT_SECRET"):
        report.error(DEVELOPMENT_ENV, "CONSOLE_JWT_SECRET equals API_JWT_SECRET: the console would accept app tokens")


def _check_fake_fcm(services, report):
    worker = environment(services.get("worker", {}))
    account = environment(services.get("fcm-account", {}))
    fake = services.get("fake-fcm", {})
    command = [str(c) for c in fake.get("command", [])]
    where = "services.fake-fcm"
    if command[:1] != ["countdown-fake-fcm"] or "--addr" not in command or "--service-account" not in command:
        report.error(where, "must run countdown-fake-fcm --addr ... --service-account ...")
        return
    address = command[command.index("--addr") + 1]
    service_account = command[command.index("--service-account") + 1]
    if worker.get("GOOGLE_APPLICATION_CREDENTIALS") != service_account:
        report.error("services.worker", "GOOGLE_APPLICATION_CREDENTIALS must be the fake's service account "
                                        f"({service_account})")
    if account.get("FAKE_FCM_ACCOUNT_FILE") != service_account:
        report.error("services.fcm-account", f"must write the account the fake reads ({service_account})")
    expected_base = f"http://fake-fcm:{port_of(address)}"
    if worker.get("FCM_BASE_URL") != expected_base:
        report.error("services.worker", f"FCM_BASE_URL must be {expected_base} (the fake's --addr)")
    if not account.get("FAKE_FCM_TOKEN_URI", "").startswith(expected_base + "/"):
        report.error("services.fcm-account", f"token_uri must point at {expected_base}")
    if worker.get("PUSH_TRANSPORT") != "fcm":
        report.error("services.worker", "PUSH_TRANSPORT must default to fcm (the fake)")


def check_fake_account_script(repo, report):
    """Runs the fcm-account service's script here: it must write a service account whose key openssl reads,
    and leave an existing one alone."""
    where = "services.fcm-account"
    service = load(repo, BASE)["services"]["fcm-account"]
    entrypoint = service.get("entrypoint", [])
    script = interpolate(service["command"][0], {}, set())
    if entrypoint[:1] != ["/bin/sh"]:
        report.error(where, "entrypoint must be /bin/sh")
        return
    with tempfile.TemporaryDirectory() as temp:
        out = Path(temp) / "service-account.json"
        env = {**environment(service), "FAKE_FCM_ACCOUNT_FILE": str(out), "PATH": os.environ["PATH"]}
        result = subprocess.run(["sh", "-euc", script], env=env, capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            report.error(where, f"script failed: {result.stderr.strip()}")
            return
        try:
            account = json.loads(out.read_text())
        except (OSError, ValueError) as error:
            report.error(where, f"did not write a JSON service account: {error}")
            return
        for key in ("type", "project_id", "private_key_id", "private_key", "client_email", "token_uri"):
            if not account.get(key):
                report.error(where, f"service account lacks {key}")
        key_file = Path(temp) / "key.pem"
        key_file.write_text(account.get("private_key", ""))
        if subprocess.run(["openssl", "pkey", "-in", str(key_file), "-noout"], capture_output=True).returncode:
            report.error(where, "private_key is not a key openssl can read")
        if account.get("token_uri") != environment(service)["FAKE_FCM_TOKEN_URI"]:
            report.error(where, f"token_uri is {account.get('token_uri')}")
        before = out.read_bytes()
        subprocess.run(["sh", "-euc", script], env=env, capture_output=True, timeout=60)
        if out.read_bytes() != before:
            report.error(where, "a second run replaced the existing account (the fake would hold the old key)")


def _check_observability(repo, services, report):
    for name in ("prometheus", "alertmanager", "grafana"):
        if "observability" not in services.get(name, {}).get("profiles", []):
            report.error(f"services.{name}", "must be in the observability profile (opt-in)")
    mounts = container_mounts(services.get("prometheus", {}))
    config_path = mounts.get("/etc/prometheus/prometheus.yml")
    if config_path != "deploy/prometheus/prometheus.yml":
        report.error("services.prometheus", "must mount deploy/prometheus/prometheus.yml")
        return
    config = yaml.safe_load((repo / config_path).read_text())
    for rule_file in config.get("rule_files", []):
        if rule_file not in mounts:
            report.error(config_path, f"rule file {rule_file} is not mounted into the prometheus service")
    alertmanagers = [target for manager in config.get("alerting", {}).get("alertmanagers", [])
                     for static in manager.get("static_configs", []) for target in static.get("targets", [])]
    if not any(target.split(":")[0] in services for target in alertmanagers):
        report.error(config_path, "alerting.alertmanagers names no compose service: firing alerts would go nowhere")
    if container_mounts(services.get("alertmanager", {})).get("/etc/alertmanager/alertmanager.yml") \
            != "deploy/prometheus/alertmanager.yml":
        report.error("services.alertmanager", "must mount deploy/prometheus/alertmanager.yml")
    worker_port = port_of(environment(services["worker"]).get("HTTP_ADDR", "0.0.0.0:9090"))
    scraped = False
    for job in config.get("scrape_configs", []):
        for sd in job.get("dns_sd_configs", []):
            if SCALED in sd.get("names", []) and sd.get("type") == "A" and sd.get("port") == worker_port:
                scraped = True
    if not scraped:
        report.error(config_path, f"no dns_sd_configs A-record job for '{SCALED}' on port {worker_port}: "
                                  "Prometheus would not see every replica")
    grafana_mounts = container_mounts(services.get("grafana", {}))
    if "deploy/grafana/countdown.json" not in grafana_mounts.values():
        report.error("services.grafana", "must mount deploy/grafana/countdown.json")
    provider = yaml.safe_load((repo / "deploy/grafana/provisioning/dashboards/countdown.yml").read_text())
    paths = [p.get("options", {}).get("path") for p in provider.get("providers", [])]
    dashboard_target = next((t for t, s in grafana_mounts.items() if s == "deploy/grafana/countdown.json"), "")
    if not any(p and dashboard_target.startswith(p.rstrip("/") + "/") for p in paths):
        report.error("deploy/grafana/provisioning/dashboards/countdown.yml",
                     f"no provider path contains the mounted dashboard {dashboard_target}")


def container_mounts(service):
    """Container path -> repository path of a service's bind mounts."""
    mounts = {}
    for volume in service.get("volumes", []):
        if isinstance(volume, str) and volume.startswith("./"):
            parts = volume.split(":")
            mounts[parts[1]] = os.path.normpath(parts[0])
    return mounts
