"""scripts/compose-smoke --kube-play: the production overlay's worker Deployment under `podman kube play`.

What Kubernetes would run, as far as podman 4.3 (Debian 12) runs it: `scripts/lint-deploy --render` renders
deploy/kubernetes/overlays/production with the real `kubectl kustomize`; its `countdown-config` ConfigMap and
`countdown-worker` Deployment go to `podman kube play` unchanged but for three values: the image (the one the smoke
built, moved from the private Docker engine with `docker save | podman load`), `PUSH_TRANSPORT=log` (no push
service here) and the annotation that keeps podman 4.3's init containers from failing the pod. The Deployment's Secret `countdown-datastores` is a podman secret in the form podman 4.3 resolves
`secretKeyRef` from (a JSON object of base64 values), its URLs pointing at PostgreSQL and Redis stand-ins started
in podman beside it. The optional secret volumes (FCM, APNs, Redis CA) get empty podman secrets: podman 4.3
ignores `optional: true` and refuses the pod when one is missing.

Checked: the `migrate` init container and the worker start, the worker answers /readyz 200; then what podman made
of every security-relevant field, read from `podman inspect` and from inside the running container
(/proc/1/status, `id`, writes to / and /tmp), each recorded as honoured or ignored in kube-play.json.

podman runs with `runtime = "runc"` and ulimits no higher than the host's (a containers.conf of the run), its
storage under the smoke's cache (`podman/`), on its default CNI network; everything it started is removed at the
end, the `cni-podman0` bridge too when this run made it.
"""

import base64
import hashlib
import json
import os
import shutil
import subprocess
import time

PODMAN = "/usr/bin/podman"
OVERLAY = "deploy/kubernetes/overlays/production"
WORKER = "countdown-worker-pod-0-worker"  # podman's names: pod <deployment>-pod-<n>, container <pod>-<container>
MIGRATE = "countdown-worker-pod-0-migrate"
KUBE_NETWORK = "podman-default-kube-network"
KUBE_NETWORK_FILE = f"/etc/cni/net.d/{KUBE_NETWORK}.conflist"
PROBE = "countdown-nonroot-probe"
OPTIONAL_SECRETS = ("countdown-fcm", "countdown-apns", "countdown-redis-ca")


class KubePlay:
    def __init__(self, smoke, cache, image, error):
        self.smoke = smoke
        self.python = os.path.join(cache, "venv", "bin", "python")  # the smoke's virtualenv, PyYAML added
        self.image = image
        self.error = error  # the smoke's exception type
        self.root = os.path.join(cache, "podman")
        # podman records the run root in its database, so it is fixed per storage; at most 50 characters.
        self.runroot = "/tmp/countdown-podman-" + hashlib.sha256(self.root.encode()).hexdigest()[:8]
        self.dir = os.path.join(smoke.run_dir, "kube")
        os.makedirs(self.dir, exist_ok=True)
        self.conf = os.path.join(self.dir, "containers.conf")
        smoke.env["CONTAINERS_CONF"] = self.conf
        self.started = []
        self.played = None
        self.secrets = []
        self.made_bridge = False
        self.facts = {}

    def podman(self, *args, what="podman", **options):
        return self.smoke.run([PODMAN, "--root", self.root, "--runroot", self.runroot, *args], what, **options)

    # ----- setup ------------------------------------------------------------------------------------------------
    def install(self):
        missing = [package for package, binary in (("podman", PODMAN), ("catatonit", "/usr/bin/catatonit")) if not os.path.exists(binary)]
        if missing:
            # catatonit: podman builds its pods' pause image from it (no registry serves one here).
            self.smoke.run(["apt-get", "install", "-y", "--no-install-recommends", *missing], "apt-get-install-podman", timeout=900)
        # podman reads registry credentials from DOCKER_CONFIG, the private engine's client directory: an empty one.
        with open(os.path.join(self.smoke.env["DOCKER_CONFIG"], "config.json"), "a") as out:
            if out.tell() == 0:
                out.write("{}\n")
        with open(self.conf, "w") as out:
            out.write('[containers]\ndefault_ulimits = ["nofile=16384:16384", "nproc=8192:8192"]\n'
                      '[engine]\nruntime = "runc"\ncgroup_manager = "cgroupfs"\nevents_logger = "file"\n')
        done = subprocess.run([self.python, "-c", "import yaml"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if done.returncode != 0:
            self.smoke.run([self.python, "-m", "pip", "install", "--quiet", "PyYAML"], "pip-pyyaml", timeout=600)
        self.made_bridge = not os.path.exists("/sys/class/net/cni-podman0")
        # kube play puts its pods on a network of its own (a CNI file in /etc/cni/net.d, bridge cni-podman1).
        self.made_kube_network = not os.path.exists(KUBE_NETWORK_FILE)
        self.facts["podman"] = self.podman("version", "--format", "{{.Client.Version}}", what="podman-version").strip()

    def images(self, tags):
        """Moves the images podman lacks (or holds in another version) from the Docker engine: one archive."""
        stale = []
        for tag in tags:
            docker_id = self.smoke.docker("image", "inspect", "--format", "{{.Id}}", tag, what="docker-image-id").strip()
            podman_id = self.podman("image", "inspect", "--format", "{{.Id}}", tag, what="podman-image-id", check=False, poll=True).strip()
            if docker_id.split(":")[-1] != podman_id:
                stale.append(tag)
        if stale:
            archive = os.path.join(self.dir, "images.tar")
            self.smoke.docker("save", "--output", archive, *stale, what="docker-save", timeout=900)
            self.podman("load", "--input", archive, what="podman-load", timeout=900)
            os.remove(archive)
        self.facts["images moved from Docker"] = ", ".join(stale) or "none (podman has them)"

    def datastores(self, password):
        """PostgreSQL and Redis stand-ins in podman; their addresses on podman's network."""
        postgres = f"countdown-kube-postgres-{os.getpid()}"
        redis = f"countdown-kube-redis-{os.getpid()}"
        self.podman("run", "--detach", "--name", postgres, "--env", "POSTGRES_USER=countdown", "--env", f"POSTGRES_PASSWORD={password}",
                    "--env", "POSTGRES_DB=countdown", "postgres:15-bookworm", what="podman-postgres")
        self.started.append(postgres)
        self.podman("run", "--detach", "--name", redis, "redis:7.2-bookworm", "redis-server", "--appendonly", "no", what="podman-redis")
        self.started.append(redis)
        self.wait(lambda: self.podman("exec", postgres, "pg_isready", "-h", "127.0.0.1", "-U", "countdown", "-d", "countdown",
                                      what="pg-isready", check=False, poll=True).find("accepting") >= 0, 90, "PostgreSQL in podman")
        self.wait(lambda: self.podman("exec", redis, "redis-cli", "ping", what="redis-ping", check=False, poll=True).strip() == "PONG",
                  60, "Redis in podman")
        address = {name: self.podman("inspect", "--format", "{{.NetworkSettings.IPAddress}}", name, what="podman-ip").strip()
                   for name in (postgres, redis)}
        return address[postgres], address[redis]

    def wait(self, condition, timeout, what):
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise self.error(f"kube play: timed out after {timeout} s waiting for {what}")
            time.sleep(1)

    # ----- the rendered manifests -------------------------------------------------------------------------------
    def manifests(self, database_url, redis_url):
        """kube.yaml (the overlay's ConfigMap and worker Deployment) and the Secret, as podman gets them."""
        rendered = os.path.join(self.dir, "rendered.yaml")
        with open(rendered, "w") as out:
            out.write(self.smoke.run(["scripts/lint-deploy", "--render", OVERLAY], "render-overlay", timeout=600))
        documents = json.loads(self.smoke.run(
            [self.python, "-c", "import json, sys, yaml; json.dump([d for d in yaml.safe_load_all(open(sys.argv[1])) if d], sys.stdout)",
             rendered], "overlay-as-json"))
        config = next(d for d in documents if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "countdown-config")
        deployment = next(d for d in documents if d["kind"] == "Deployment" and d["metadata"]["name"] == "countdown-worker")
        self.deployment = deployment
        self.config = config
        config["data"]["PUSH_TRANSPORT"] = "log"
        # podman 4.3 removes a "once" init container right after starting it, before it has finished, and fails the
        # pod ("cannot remove container ... as it is running"): keep it ("always"). Read from the Deployment's own
        # annotations, not the pod template's.
        deployment["metadata"].setdefault("annotations", {})["io.podman.annotations.init.container.type"] = "always"
        spec = deployment["spec"]["template"]["spec"]
        for container in spec.get("initContainers", []) + spec["containers"]:
            container["image"] = self.image
        self.kube_file = os.path.join(self.dir, "kube.yaml")
        # JSON is YAML: one document each.
        with open(self.kube_file, "w") as out:
            out.write(json.dumps(config, indent=1) + "\n---\n" + json.dumps(deployment, indent=1) + "\n")
        self.secret("countdown-datastores", {"DATABASE_URL": database_url, "REDIS_URL": redis_url})
        for name in OPTIONAL_SECRETS:
            self.secret(name, {})

    def secret(self, name, values):
        """A podman secret as kube play reads one: a JSON object of base64 values."""
        path = os.path.join(self.dir, "secret.json")
        with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as out:
            json.dump({key: base64.b64encode(value.encode()).decode() for key, value in values.items()}, out)
        self.podman("secret", "create", name, path, what=f"podman-secret-{name}")
        self.secrets.append(name)
        os.remove(path)

    # ----- play and look ----------------------------------------------------------------------------------------
    def play(self):
        started = time.monotonic()
        self.played = self.kube_file
        self.podman("kube", "play", self.kube_file, what="kube-play", timeout=300)

        def ready():
            state = self.podman("inspect", "--format", "{{.State.Status}}", WORKER, what="worker-state", check=False, poll=True).strip()
            if state in ("exited", "stopped"):
                raise self.error(f"kube play: the worker container {state} (see kube-worker.log)")
            code = self.podman("exec", WORKER, "curl", "--silent", "--output", "/dev/null", "--write-out", "%{http_code}",
                               "--max-time", "2", "http://127.0.0.1:9090/readyz", what="worker-readyz", check=False, poll=True)
            return code.strip() == "200"
        try:
            self.wait(ready, 120, "the worker's /readyz")
        finally:
            with open(os.path.join(self.smoke.output, "kube-worker.log"), "w") as out:
                out.write(self.podman("logs", WORKER, what="kube-worker-logs", check=False, poll=True))
        self.facts["worker ready"] = f"/readyz 200 {time.monotonic() - started:.1f} s after kube play began (migrate init container first)"

    def inspect(self):
        """What podman made of the Deployment's fields: [(field, wanted, observed, honoured)]."""
        info = json.loads(self.podman("inspect", WORKER, what="inspect-worker"))[0]
        host = info.get("HostConfig", {})
        status = self.podman("exec", WORKER, "sh", "-c", "grep -E '^(Uid|Gid|Groups|CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/1/status",
                             what="worker-proc-status")
        proc = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        proc = {key: value.split() for key, value in proc.items()}
        root_write = self.podman("exec", WORKER, "sh", "-c", "touch /kube-play-probe 2>&1 && echo writable || true", what="write-root", check=False)
        tmp_write = self.podman("exec", WORKER, "sh", "-c", "touch /tmp/kube-play-probe && echo writable", what="write-tmp", check=False)
        schema = self.psql_version()
        migrate = (json.loads(self.podman("inspect", MIGRATE, what="inspect-migrate", check=False) or "[]") or [{}])[0]
        order = (f"migrate exit {migrate.get('State', {}).get('ExitCode')}, finished {migrate.get('State', {}).get('FinishedAt', '?')[11:23]}; "
                 f"worker started {info.get('State', {}).get('StartedAt', '?')[11:23]}")
        in_order = migrate.get("State", {}).get("FinishedAt", "") < info.get("State", {}).get("StartedAt", "")
        probe_uid = self.probe_nonroot()
        spec = self.deployment["spec"]["template"]["spec"]
        pod_context = spec.get("securityContext", {})
        container = spec["containers"][0]
        context = container.get("securityContext", {})
        limits = container.get("resources", {}).get("limits", {})
        cap_eff = int(proc.get("CapEff", ["0"])[0], 16)
        # A non-root process has no effective capabilities anyway: dropping ALL shows in the bounding set.
        cap_bnd = int(proc.get("CapBnd", ["0"])[0], 16)
        cpus = host.get("CpuQuota", 0) / host.get("CpuPeriod", 100000) if host.get("CpuQuota") else host.get("NanoCpus", 0) / 1e9
        health = (info.get("Config", {}).get("Healthcheck") or {}).get("Test")
        if health:
            # Podman turns the liveness probe into a health check, run by systemd timers; none here, so run it once.
            ran = self.podman("healthcheck", "run", WORKER, what="healthcheck-run", check=False, poll=True).strip() or "healthy"
            # A named port (`port: http`) becomes port 0 in podman 4.3's command: always unhealthy.
            liveness = (f"health check {' '.join(health)} (timers need systemd: `podman healthcheck run`: {ran})", ran == "healthy")
        else:
            liveness = ("no health check", False)
        rows = [
            ("initContainers (migrate)", "runs, exit 0", f"schema at version {schema}", bool(schema)),
            ("initContainers order", "finish before the worker starts", order, in_order),
            ("pod securityContext.runAsUser/runAsGroup", f"{pod_context.get('runAsUser')}/{pod_context.get('runAsGroup')}",
             f"uid {proc['Uid'][0]}, gid {proc['Gid'][0]}; a copy asking for runAsUser 0 ran as uid {probe_uid} (the image says 10001)",
             probe_uid == "0" and proc["Uid"][0] == str(pod_context.get("runAsUser"))),
            ("pod securityContext.fsGroup", str(pod_context.get("fsGroup")),
             f"groups: {' '.join(proc.get('Groups', [])) or 'none'} (the image user's own; with fsGroup differing from the "
             "primary group podman 4.3 adds nothing)",
             str(pod_context.get("fsGroup")) in proc.get("Groups", []) and str(pod_context.get("fsGroup")) != proc["Gid"][0]),
            ("pod securityContext.runAsNonRoot", str(pod_context.get("runAsNonRoot")),
             f"the copy asking for uid 0 {'ran as root' if probe_uid == '0' else probe_uid}", probe_uid != "0"),
            ("pod securityContext.seccompProfile", pod_context.get("seccompProfile", {}).get("type"),
             f"Seccomp mode {proc.get('Seccomp', ['?'])[0]} (2: podman's default filter, applied to every container)", proc.get("Seccomp", ["0"])[0] == "2"),
            ("readOnlyRootFilesystem", str(context.get("readOnlyRootFilesystem")),
             f"ReadonlyRootfs {host.get('ReadonlyRootfs')}; write to /: {'allowed' if 'writable' in root_write else 'refused'}",
             host.get("ReadonlyRootfs") is True and "writable" not in root_write),
            ("emptyDir /tmp", "writable", "writable" if "writable" in tmp_write else "refused", "writable" in tmp_write),
            ("allowPrivilegeEscalation", str(context.get("allowPrivilegeEscalation")), f"NoNewPrivs {proc.get('NoNewPrivs', ['?'])[0]}",
             proc.get("NoNewPrivs", ["0"])[0] == "1"),
            ("capabilities.drop", ",".join(context.get("capabilities", {}).get("drop", [])), f"CapBnd {cap_bnd:#x}, CapEff {cap_eff:#x}",
             cap_bnd == 0 and cap_eff == 0),
            ("privileged", str(context.get("privileged")), f"Privileged {host.get('Privileged')}", host.get("Privileged") is False),
            ("resources.limits.memory", limits.get("memory"), f"{host.get('Memory', 0) / 2**20:.0f} MiB",
             host.get("Memory", 0) > 0),
            ("resources.limits.cpu", limits.get("cpu"), f"{cpus:g} CPUs", cpus > 0),
            ("livenessProbe", "httpGet /healthz", *liveness),
            ("readinessProbe, startupProbe", "httpGet /readyz, /healthz", "not applied (not in podman's support table)", False),
            ("lifecycle.preStop", "sleep 5", "not applied (not in podman's support table)", False),
            ("terminationGracePeriodSeconds", str(spec.get("terminationGracePeriodSeconds")),
             f"stop timeout {info.get('Config', {}).get('StopTimeout')} s", info.get("Config", {}).get("StopTimeout") == spec.get("terminationGracePeriodSeconds")),
            ("secret volumes, optional: true", "fcm, apns, redis-ca may be missing",
             f"a missing one fails the pod; empty secrets given, {self.mounts(info)}", False),
            ("topologySpreadConstraints, serviceAccountName", "set", "not applied (single node; podman's support table)", False),
        ]
        self.rows = rows
        with open(os.path.join(self.smoke.output, "kube-play.json"), "w") as out:
            json.dump([{"field": f, "manifest": w, "observed": o, "honoured": h} for f, w, o, h in rows], out, indent=1)
        honoured = [f for f, _, _, h in rows if h is True]
        ignored = [f for f, _, _, h in rows if h is False]
        self.facts["honoured"] = "; ".join(honoured)
        self.facts["ignored"] = "; ".join(ignored)
        for field, wanted, observed, verdict in rows:
            if verdict is None:
                self.facts[field] = f"{wanted} -> {observed}"
        for must in ("readOnlyRootFilesystem", "allowPrivilegeEscalation", "capabilities.drop", "initContainers (migrate)"):
            if must not in honoured:
                raise self.error(f"kube play: {must} not in effect (see kube-play.json)")
        if proc["Uid"][0] == "0":
            raise self.error("kube play: the worker runs as root")

    def probe_nonroot(self):
        """A copy of the Deployment whose pod asks for uid 0 while keeping `runAsNonRoot: true` (Kubernetes refuses
        to start it), sleeping instead of working: the uid podman gives it, or why it did not start."""
        probe = json.loads(json.dumps(self.deployment))
        probe["metadata"]["name"] = PROBE
        spec = probe["spec"]["template"]["spec"]
        spec.pop("initContainers", None)
        spec["securityContext"]["runAsUser"] = 0
        spec["containers"][0]["args"] = ["/bin/sleep", "300"]
        # podman 4.3 publishes a containerPort on the host's same port even without hostPort: the worker holds 9090.
        spec["containers"][0].pop("ports", None)
        path = os.path.join(self.dir, "probe.yaml")
        with open(path, "w") as out:
            out.write(json.dumps(self.config, indent=1) + "\n---\n" + json.dumps(probe, indent=1) + "\n")
        self.probe_file = path
        answer = self.podman("kube", "play", path, what="kube-play-probe", check=False, timeout=300)
        status = self.podman("exec", f"{PROBE}-pod-0-worker", "grep", "^Uid:", "/proc/1/status", what="probe-uid", check=False, poll=True)
        self.podman("kube", "down", path, what="kube-down-probe", check=False, timeout=120)
        return status.split()[1] if status.startswith("Uid:") else "did not start (see kube-play-probe.log)"

    def mounts(self, info):
        destinations = sorted(m.get("Destination", "") for m in info.get("Mounts", []))
        return "mounts: " + (", ".join(destinations) or "none")

    def psql_version(self):
        postgres = self.started[0]
        return self.podman("exec", postgres, "psql", "-U", "countdown", "-d", "countdown", "-Atq", "-c",
                           "SELECT max(version) FROM countdown_schema_migrations", what="kube-schema", check=False).strip()

    # ----- teardown ---------------------------------------------------------------------------------------------
    def down(self):
        for played in (self.played, getattr(self, "probe_file", None)):
            if played:
                self.podman("kube", "down", played, what="kube-down", check=False, timeout=120)
        for name in reversed(self.started):
            self.podman("rm", "--force", "--time", "5", name, what="podman-rm", check=False, timeout=120)
        for name in self.secrets:
            self.podman("secret", "rm", name, what="podman-secret-rm", check=False)
        self.podman("pod", "rm", "--force", "--all", what="podman-pod-rm", check=False, timeout=120)
        bridges = []
        if self.made_kube_network and os.path.exists(KUBE_NETWORK_FILE):
            with open(KUBE_NETWORK_FILE) as config:
                bridges += [plugin.get("bridge") for plugin in json.load(config).get("plugins", []) if plugin.get("bridge")]
            self.podman("network", "rm", "--force", KUBE_NETWORK, what="podman-network-rm", check=False, timeout=120)
        if self.made_bridge:
            bridges.append("cni-podman0")
        for bridge in bridges:
            if os.path.exists(f"/sys/class/net/{bridge}"):
                subprocess.run(["ip", "link", "delete", bridge], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(self.runroot, ignore_errors=True)
