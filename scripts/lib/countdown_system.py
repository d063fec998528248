"""Runs the whole Countdown system on this machine for scripts/bench-system and scripts/chaos.

The bash entry points start one throwaway PostgreSQL and one Redis (scripts/lib/services.sh) and describe them
in the environment; this module adds, per run, a database (migrated by `countdown-admin migrate`), a Redis
namespace, a `countdown-fake-fcm` on a free loopback port and N real `countdown-worker` processes. It seeds
rows the way the existing backend would (set-based SQL), reads what the fake FCM accepted from its record
file, and compares that with what PostgreSQL says should have been sent.

Standard library only; PostgreSQL through `psql`, Redis through `redis-cli`.
"""

import collections
import json
import os
import shlex
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024
FIELD_SEPARATOR = "\x1f"


class HarnessError(Exception):
    """A step of the harness itself failed (not a finding about the system under test)."""


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(condition, timeout, what, every=0.1):
    """Polls `condition` until it returns a truthy value; raises HarnessError after `timeout` seconds."""
    deadline = time.time() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.time() >= deadline:
            raise HarnessError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(every)


def percentile(values, fraction):
    """Nearest-rank percentile of `values` (fraction in 0...1); None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, int(round(fraction * len(ordered) + 0.5 - 1e-9)))
    return ordered[min(rank, len(ordered)) - 1]


# MARK: - Processes seen through /proc


def record_pid(root, pid, binary):
    """Notes a started process so the bash entry point can kill it if the harness itself dies."""
    with open(os.path.join(root, "pids"), "a") as handle:
        handle.write(f"{pid} {os.path.realpath(binary)}\n")


def context_switches(pid):
    """Context switches (voluntary and not) of every thread a live process has now; None when it is gone. Threads
    that ended are not counted (Linux keeps no total for them), so a phase in which threads exit reads low."""
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/status") as handle:
                for line in handle:
                    if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                        total += int(line.split()[1])
        except OSError:
            continue  # the thread ended between the listing and the read
    return total


def process_times(pid, children=False):
    """CPU seconds (user + system) of a live process, plus those of its reaped children when asked."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    # After the command: state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14)
    ticks = int(fields[11]) + int(fields[12])
    if children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / CLOCK_TICKS


def process_memory_kb(pid):
    """(VmRSS, VmHWM) in kB, or None when the process is gone."""
    values = {}
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                name, _, rest = line.partition(":")
                if name in ("VmRSS", "VmHWM"):
                    values[name] = int(rest.split()[0])
    except OSError:
        return None
    return values.get("VmRSS", 0), values.get("VmHWM", 0)


def children_of(parent):
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == parent:
            found.append(int(entry))
    return found


# MARK: - PostgreSQL and Redis servers


class Servers:
    """The PostgreSQL and Redis servers started by the bash entry point (see scripts/lib/system-run.sh)."""

    def __init__(self, environ=os.environ):
        self.root = environ["COUNTDOWN_RUN_ROOT"]
        self.repo = environ["COUNTDOWN_REPO"]
        self.bin_dir = environ["COUNTDOWN_BIN_DIR"]
        self.pg_port = int(environ["COUNTDOWN_PG_PORT"])
        self.pg_bin = environ["COUNTDOWN_PG_BIN"]
        self.pg_user = environ["COUNTDOWN_PG_USER"]
        self.pg_data = environ["COUNTDOWN_PG_DATA"]
        self.redis_port = int(environ["COUNTDOWN_REDIS_PORT"])
        self.redis_dir = os.path.join(self.root, "redis")
        self.redis_pidfile = environ["COUNTDOWN_REDIS_PIDFILE"]
        self.redis_url = f"redis://127.0.0.1:{self.redis_port}/0"

    def binary(self, name):
        return os.path.join(self.bin_dir, name)

    def database_url(self, database="postgres"):
        return f"postgres://countdown@127.0.0.1:{self.pg_port}/{database}"

    # PostgreSQL

    def _as_pg_user(self, command):
        if os.geteuid() == 0 and self.pg_user != "root":
            return ["runuser", "-u", self.pg_user, "--"] + command
        return command

    def postmaster_pid(self):
        try:
            with open(os.path.join(self.pg_data, "postmaster.pid")) as handle:
                return int(handle.readline())
        except (OSError, ValueError):
            return None

    def stop_postgres(self, mode="immediate"):
        subprocess.run(self._as_pg_user([os.path.join(self.pg_bin, "pg_ctl"), "-D", self.pg_data, "-m", mode, "-w", "stop"]),
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def start_postgres(self, settings=None):
        """Starts the server again with the options it last ran with (postmaster.opts), `-c name=value` settings
        replaced or added from `settings` (remembered for later restarts)."""
        self.pg_settings = dict(getattr(self, "pg_settings", {}), **(settings or {}))
        with open(os.path.join(self.pg_data, "postmaster.opts")) as handle:
            arguments = shlex.split(handle.read())[1:]
        options, index = [], 0
        while index < len(arguments):
            option = arguments[index]
            value = arguments[index + 1] if index + 1 < len(arguments) else None
            index += 2 if option in ("-D", "-c", "-p", "-k") else 1
            if option == "-D" or (option == "-c" and value.split("=", 1)[0] in self.pg_settings):
                continue
            options += [option, value] if option in ("-c", "-p", "-k") else [option]
        for name, value in self.pg_settings.items():
            options += ["-c", f"{name}={value}"]
        subprocess.run(self._as_pg_user([
            os.path.join(self.pg_bin, "pg_ctl"), "-D", self.pg_data, "-l", os.path.join(self.pg_data, "server.log"),
            "-w", "-t", "60", "-o", " ".join(shlex.quote(o) for o in options), "start"]),
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def restart_postgres(self, settings):
        """A clean restart with some settings changed (see `start_postgres`)."""
        self.stop_postgres(mode="fast")
        self.start_postgres(settings)

    def enable_statement_statistics(self):
        """Loads pg_stat_statements (a restart); each database then needs CREATE EXTENSION pg_stat_statements."""
        self.restart_postgres({"shared_preload_libraries": "pg_stat_statements", "pg_stat_statements.track_planning": "on"})

    def postgres_cpu_seconds(self):
        """CPU of the postmaster, its live backends, and every backend it has reaped."""
        pid = self.postmaster_pid()
        if pid is None:
            return 0.0
        total = process_times(pid, children=True) or 0.0
        for child in children_of(pid):
            total += process_times(child) or 0.0
        return total

    def psql(self, database_url, sql, single_transaction=True):
        """Runs SQL (several statements allowed); returns rows as lists of strings."""
        command = ["psql", "-X", "-q", "-A", "-t", "-F", FIELD_SEPARATOR, "-v", "ON_ERROR_STOP=1", "-d", database_url]
        if single_transaction:
            command.append("-1")
        result = subprocess.run(command + ["-f", "-"], input=sql, capture_output=True, text=True)
        if result.returncode != 0:
            raise HarnessError(f"psql failed: {result.stderr.strip()}\n--- SQL ---\n{sql[:2000]}")
        return [line.split(FIELD_SEPARATOR) for line in result.stdout.splitlines() if line != ""]

    def create_database(self, name):
        self.psql(self.database_url(), f"DROP DATABASE IF EXISTS {name}", single_transaction=False)
        self.psql(self.database_url(), f"CREATE DATABASE {name}", single_transaction=False)
        return self.database_url(name)

    # Redis

    def redis(self, *arguments, stdin=None):
        command = ["redis-cli", "-p", str(self.redis_port)]
        if stdin is not None:
            command.append("-x")
        result = subprocess.run(command + [str(a) for a in arguments], input=stdin, capture_output=True)
        if result.returncode != 0:
            raise HarnessError(f"redis-cli {' '.join(map(str, arguments))} failed: {result.stderr.decode(errors='replace')}")
        return result.stdout.decode(errors="replace").strip()

    def redis_environment(self):
        """What a worker is given to reach this Redis."""
        return {"REDIS_URL": self.redis_url}

    def redis_pid(self):
        try:
            with open(self.redis_pidfile) as handle:
                return int(handle.read().strip())
        except (OSError, ValueError):
            return None

    def redis_cpu_seconds(self):
        pid = self.redis_pid()
        return (process_times(pid) or 0.0) if pid else 0.0

    def kill_redis(self):
        """SIGKILL: a crash, not a shutdown (no final AOF rewrite; appendfsync everysec applies)."""
        pid = self.redis_pid()
        if pid:
            os.kill(pid, signal.SIGKILL)
            wait_for(lambda: process_times(pid) is None or is_zombie(pid), 10, "redis-server to die")

    def start_redis(self):
        subprocess.run([
            "redis-server", "--port", str(self.redis_port), "--bind", "127.0.0.1", "--dir", self.redis_dir,
            "--daemonize", "yes", "--pidfile", self.redis_pidfile, "--logfile", os.path.join(self.redis_dir, "redis.log"),
            "--appendonly", "yes", "--appendfsync", "everysec", "--save", ""], check=True, stdout=subprocess.DEVNULL)
        wait_for(lambda: self._redis_answers(), 20, "redis-server to answer")

    def _redis_answers(self):
        try:
            return self.redis("PING") == "PONG"
        except HarnessError:
            return False


def is_zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


# MARK: - The fake FCM


class FakeFCM:
    """A `countdown-fake-fcm` on a free loopback port with its own service account and record file."""

    def __init__(self, servers, directory, debug=False, threads=8, record_flush_ms=0):
        self.servers = servers
        self.directory = directory
        os.makedirs(directory, exist_ok=True)
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.account_path = os.path.join(directory, "service-account.json")
        self.record_path = os.path.join(directory, "accepted.jsonl")
        self.log_path = os.path.join(directory, "fake-fcm.log")
        subprocess.run([os.path.join(servers.repo, "scripts", "gen-service-account"), self.account_path, f"{self.base_url}/token"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        environment = dict(os.environ, LOG_LEVEL="debug" if debug else "info")
        self._log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            [servers.binary("countdown-fake-fcm"), "--addr", f"127.0.0.1:{self.port}", "--service-account", self.account_path,
             "--record", self.record_path, "--record-flush-ms", str(record_flush_ms), "--keep", "1000", "--threads", str(threads)],
            env=environment, stdout=subprocess.DEVNULL, stderr=self._log, start_new_session=True)
        record_pid(servers.root, self.process.pid, servers.binary("countdown-fake-fcm"))
        wait_for(self._healthy, 20, "the fake FCM to listen")
        self._offset = 0
        self._partial = b""

    def _healthy(self):
        if self.process.poll() is not None:
            raise HarnessError(f"countdown-fake-fcm exited with {self.process.returncode}; see {self.log_path}")
        try:
            with urllib.request.urlopen(self.base_url + "/healthz", timeout=2) as answer:
                return answer.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base_url + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"} if data else {})
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                text = answer.read().decode()
        except urllib.error.HTTPError as error:
            raise HarnessError(f"{method} {path}: HTTP {error.code} {error.read().decode(errors='replace')}")
        return json.loads(text) if text else None

    def stats(self):
        return self.call("GET", "/fake/stats")

    def fault(self, rule):
        return self.call("POST", "/fake/faults", rule)

    def clear_faults(self):
        self.call("DELETE", "/fake/faults")

    def cpu_seconds(self):
        return process_times(self.process.pid) or 0.0

    def new_records(self):
        """Accepted messages appended to the record file since the last call, oldest first."""
        with open(self.record_path, "rb") as handle:
            handle.seek(self._offset)
            chunk = handle.read()
        self._offset += len(chunk)
        data = self._partial + chunk
        lines = data.split(b"\n")
        self._partial = lines.pop()
        return [json.loads(line) for line in lines if line]

    def all_records(self):
        """Every accepted message in the record file, whole (independent of `new_records`)."""
        with open(self.record_path, "rb") as handle:
            return [json.loads(line) for line in handle if line.strip()]

    def request_log(self):
        """Every send the fake answered (debug log): dicts with `at` (epoch), `token` (last 8), `status`."""
        requests = []
        with open(self.log_path, "rb") as handle:
            for raw in handle:
                try:
                    entry = json.loads(raw)
                except ValueError:
                    continue
                message = entry.get("msg")
                if message == "message accepted":
                    status = 200
                elif message == "send failed by fault":
                    status = int(entry.get("status", 0))
                else:
                    continue
                requests.append({"at": parse_iso_time(entry["ts"]), "token": entry.get("token", "").lstrip("…"), "status": status})
        return requests

    def stop(self):
        stop_process(self.process, signal.SIGTERM, 10)
        self._log.close()


def stop_process(process, stop_signal, grace):
    """Sends `stop_signal` to a running child, waits up to `grace` seconds for it to exit, then kills it."""
    if process.poll() is not None:
        return
    process.send_signal(stop_signal)
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def parse_iso_time(text):
    """Epoch seconds of an ISO-8601 UTC time such as 2026-01-02T03:04:05.678Z."""
    from datetime import datetime
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def start_key(record):
    """(streamId, push-to-start token) of an accepted start message, (streamId, FCM token) of an accepted Android
    countdown start (`ANDROID_COUNTDOWN=on`), else None."""
    if record.get("event") == "android_start":
        stream = ((record.get("message") or {}).get("data") or {}).get("streamId")
        return (stream, record.get("token")) if stream else None
    if record.get("event") != "start":
        return None
    try:
        stream = record["message"]["apns"]["payload"]["aps"]["attributes"]["streamId"]
    except (KeyError, TypeError):
        return None
    return stream, record.get("liveActivityToken")


def reminder_stream(record):
    message = record.get("message") or {}
    data = message.get("data") or {}
    if data.get("type") != "stream_reminder":
        return None
    return data.get("streamId")


# MARK: - Workers


class Worker:
    """One `countdown-worker` process with its log file; optionally under libfaketime."""

    FAKETIME_LIBRARY = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"

    def __init__(self, binary, environment, log_path, root, clock_offset=None):
        self.log_path = log_path
        self._metrics_address = None
        self._log = open(log_path, "ab")
        environment = dict(environment)
        if clock_offset:
            if not os.path.exists(self.FAKETIME_LIBRARY):
                raise HarnessError(f"{self.FAKETIME_LIBRARY} is missing (apt-get install libfaketime)")
            environment.update({"LD_PRELOAD": self.FAKETIME_LIBRARY, "FAKETIME": clock_offset,
                                "FAKETIME_DONT_FAKE_MONOTONIC": "1", "FAKETIME_NO_CACHE": "1"})
        self.started_at = time.time()
        self.process = subprocess.Popen([binary], env=environment, stdout=self._log, stderr=self._log, start_new_session=True)
        self.pid = self.process.pid
        record_pid(root, self.pid, binary)
        self.exit_code = None
        self.exited_at = None

    @property
    def alive(self):
        self._poll()
        return self.exit_code is None

    def _poll(self):
        if self.exit_code is None and self.process.poll() is not None:
            self.exit_code = self.process.returncode
            self.exited_at = time.time()

    def cpu_seconds(self):
        return process_times(self.pid) or 0.0

    def memory_kb(self):
        return process_memory_kb(self.pid)

    def context_switches(self):
        return context_switches(self.pid) or 0

    def terminate(self):
        if self.alive:
            self.process.send_signal(signal.SIGTERM)

    def kill(self):
        if self.alive:
            self.process.kill()
        self.wait(10)

    def wait(self, timeout):
        """Waits for the exit; returns the exit code, or None if still running after `timeout`."""
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        self._poll()
        return self.exit_code

    def close(self):
        if self.alive:
            self.process.kill()
            self.process.wait()
        self._poll()
        self._log.close()

    def metrics_address(self):
        """host:port of the worker's health and metrics server, from its log (HTTP_ADDR may say port 0); read once."""
        if self._metrics_address:
            return self._metrics_address
        for entry in self.log_lines():
            if entry.get("msg") == "serving health and metrics":
                self._metrics_address = entry.get("address")
                return self._metrics_address
        return None

    def metrics(self):
        """The worker's /metrics as {(name, labels): value}; empty when it cannot be reached."""
        address = self.metrics_address()
        if not address:
            return {}
        try:
            with urllib.request.urlopen(f"http://{address}/metrics", timeout=5) as answer:
                text = answer.read().decode()
        except (urllib.error.URLError, OSError):
            return {}
        values = {}
        for line in text.splitlines():
            if not line or line.startswith("#"):
                continue
            key, _, value = line.rpartition(" ")
            try:
                values[key] = float(value)
            except ValueError:
                continue
        return values

    def log_lines(self):
        lines = []
        with open(self.log_path, "rb") as handle:
            for raw in handle:
                try:
                    lines.append(json.loads(raw))
                except ValueError:
                    continue
        return lines


# MARK: - One deployment: database, namespace, fake FCM, workers


class Deployment:
    """Everything one run needs, isolated from other runs on the same servers."""

    def __init__(self, servers, name, settings=None, fake_debug=False, fake_record_flush_ms=0):
        self.servers = servers
        self.name = name
        self.directory = os.path.join(servers.root, name)
        os.makedirs(self.directory, exist_ok=True)
        self.database_url = servers.create_database(name.replace("-", "_"))
        self.namespace = f"{name}-{os.getpid()}"
        self.fake = FakeFCM(servers, os.path.join(self.directory, "fake-fcm"), debug=fake_debug, record_flush_ms=fake_record_flush_ms)
        self.settings = {
            "START_LEAD_SECONDS": "3600", "REMINDER_LEAD_SECONDS": "600", "EXPIRE_AFTER_SECONDS": "3600",
            "WORKER_CONCURRENCY": "64", "PUSH_CONCURRENCY": "256", "JOB_LEASE_SECONDS": "10",
            "SHUTDOWN_GRACE_SECONDS": "10", "RECONCILE_INTERVAL_SECONDS": "300",
        }
        self.settings.update(settings or {})
        self.workers = []
        self.retired = []
        # The shared Redis (a namespace of its own), or a server set of the scenario's own (`use_redis`).
        self.redis_target = servers
        self._admin("migrate")

    def use_redis(self, target):
        """Points workers, admin commands and the harness' Redis checks at `target` (an object with `redis()`,
        `redis_environment()` and `stop()`, such as a SentinelSet); it is stopped with the deployment."""
        self.redis_target = target

    def redis(self, *arguments, stdin=None):
        return self.redis_target.redis(*arguments, stdin=stdin)

    @property
    def start_lead(self):
        return int(self.settings["START_LEAD_SECONDS"])

    def environment(self, overrides=None):
        environment = {key: value for key, value in os.environ.items() if not key.startswith("COUNTDOWN_")}
        environment.update({
            "DATABASE_URL": self.database_url, "COUNTDOWN_NAMESPACE": self.namespace,
            "PUSH_TRANSPORT": "fcm", "GOOGLE_APPLICATION_CREDENTIALS": self.fake.account_path, "FCM_BASE_URL": self.fake.base_url,
            "HTTP_ADDR": "127.0.0.1:0", "LOG_FORMAT": "json", "LOG_LEVEL": "info",
        })
        environment.update(self.redis_target.redis_environment())
        environment.update(self.settings)
        environment.update(overrides or {})
        return environment

    def _admin(self, *arguments):
        result = subprocess.run([self.servers.binary("countdown-admin")] + list(arguments), env=self.environment(),
                                capture_output=True, text=True, timeout=300)
        if result.returncode != 0:
            raise HarnessError(f"countdown-admin {' '.join(arguments)} exited {result.returncode}: {result.stderr.strip()}")
        return result.stdout

    def admin_json(self, *arguments):
        return json.loads(self._admin(*arguments, "--json"))

    def start_worker(self, overrides=None, clock_offset=None):
        index = len(self.workers) + len(self.retired)
        worker = Worker(self.servers.binary("countdown-worker"), self.environment(overrides),
                        os.path.join(self.directory, f"worker-{index}.log"), self.servers.root, clock_offset=clock_offset)
        worker.index = index
        self.workers.append(worker)
        return worker

    def retire(self, worker):
        """Moves an exited (killed or stopped) worker out of the live list."""
        self.workers.remove(worker)
        self.retired.append(worker)

    def stop_workers(self, timeout=30):
        """SIGTERM to every worker; returns their exit codes."""
        for worker in self.workers:
            worker.terminate()
        codes = [worker.wait(timeout) for worker in self.workers]
        for worker in list(self.workers):
            self.retire(worker)
        return codes

    def close(self):
        for worker in self.workers + self.retired:
            worker.close()
        self.fake.stop()
        if self.redis_target is not self.servers:
            self.redis_target.stop()
            return
        self.servers.redis("EVAL", "for _, k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end return 1", "0",
                           "{" + self.namespace + "}*")

    # SQL

    def sql(self, text, single_transaction=True):
        return self.servers.psql(self.database_url, text, single_transaction)

    def scalar(self, text):
        rows = self.sql(text, single_transaction=False)
        return rows[0][0] if rows else None

    def db_now(self):
        return float(self.scalar("SELECT extract(epoch FROM clock_timestamp())"))

    def outbox_backlog(self):
        return int(self.scalar("SELECT count(*) FROM countdown_outbox"))

    def wait_outbox_drained(self, timeout):
        started = time.time()
        wait_for(lambda: self.outbox_backlog() == 0, timeout, "the outbox relay to drain", every=0.2)
        return time.time() - started

    # Queue (Redis)

    def queue_key(self, name):
        return "{" + self.namespace + "}:q1:" + name

    def queue_counts(self):
        """(due now, delayed, leased, dead) by the Redis clock."""
        counts = self.redis("EVAL", self.QUEUE_COUNTS_SCRIPT, "3", self.queue_key("due"), self.queue_key("leased"),
                            self.queue_key("dead")).split()
        due, waiting, leased, dead = (int(count) for count in counts)
        return due, waiting - due, leased, dead

    # One round trip, one moment: (due now, waiting, leased, dead) by the server's clock.
    QUEUE_COUNTS_SCRIPT = """
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        return {redis.call('ZCOUNT', KEYS[1], '-inf', now), redis.call('ZCARD', KEYS[1]), redis.call('ZCARD', KEYS[2]),
                redis.call('ZCARD', KEYS[3])}
    """


# MARK: - Seeding (set-based, as the backend would write the rows)


def seed_people_sql(prefix, streams, token_base=0, android_share=0.0):
    """Users and devices for `streams` streams of three participants each (creator k=0, guests k=1, 2).

    Each user gets 1 or 2 eligible iOS devices (by the parity of i+k), and some get ineligible ones: an Android
    device (k+i divisible by 3) and an iOS device without a push-to-start token (divisible by 5). FCM tokens end
    in a distinct 8-digit number, so the fake's logs (which show the last 8 characters) tell devices apart.
    The device outbox rows are removed in the same transaction: these devices registered before any of the
    seeded streams existed, so their backfills would find nothing (and are not what is measured).

    `android_share` (0-1, for `ANDROID_COUNTDOWN=on`): that share of the eligible devices (chosen by a hash of the
    device id, `android_device_sql`) is Android with an FCM token and no push-to-start token, and the ineligible
    Android device has no FCM token, so the same devices get a start as with 0, only on either platform.
    """
    android = android_device_sql(f"'{prefix}d' || i || '_' || k || '_' || j", android_share)
    return f"""
        INSERT INTO users (id, display_name, locale)
        SELECT '{prefix}u' || i || '_' || k, 'User ' || i || ' ' || k, CASE WHEN (i + k) % 4 = 0 THEN 'en' ELSE 'tr' END
        FROM generate_series(1, {streams}) i, generate_series(0, 2) k;

        INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token, locale)
        SELECT '{prefix}d' || i || '_' || k || '_' || j, '{prefix}u' || i || '_' || k,
               CASE WHEN j = 3 OR (j <= 2 AND {android}) THEN 'android' ELSE 'ios' END,
               CASE WHEN j = 3 AND {android_share} > 0 THEN NULL
                    ELSE 'fcm-' || md5('{prefix}' || i || '_' || k || '_' || j) || lpad(({token_base} + (i * 3 + k) * 5 + j)::text, 8, '0') END,
               CASE WHEN j <= 2 AND NOT {android} THEN md5('pts-{prefix}' || i || '_' || k || '_' || j) || md5('{prefix}' || i) ELSE NULL END,
               CASE WHEN (i + j) % 7 = 0 THEN 'en-US' ELSE NULL END
        FROM generate_series(1, {streams}) i, generate_series(0, 2) k, generate_series(1, 4) j
        WHERE (j = 1)
           OR (j = 2 AND (i + k) % 2 = 1)
           OR (j = 3 AND (i + k) % 3 = 0)
           OR (j = 4 AND (i + k) % 5 = 0);

        DELETE FROM countdown_outbox WHERE topic = 'device';
    """


def android_device_sql(device_id_sql, share):
    """An SQL condition true for about `share` (0-1) of devices, by the first two bytes of the md5 of their id
    (`device_id_sql`, an SQL expression): the same devices in every run; always false for 0."""
    if share <= 0:
        return "false"
    return f"(get_byte(decode(md5({device_id_sql}), 'hex'), 0) * 256 + get_byte(decode(md5({device_id_sql}), 'hex'), 1)) < {round(share * 65536)}"


def is_android_start(key):
    """Whether a start key (`start_key`) is an Android countdown's: seeded FCM tokens start with `fcm-`,
    push-to-start tokens are hexadecimal."""
    return bool(key[1]) and key[1].startswith("fcm-")


def seed_streams_sql(people_prefix, stream_prefix, streams, planned_sql):
    """`streams` scheduled streams `<stream_prefix>1…`, stream i with the people of index i."""
    return f"""
        INSERT INTO streams (id, title, planned_start_at)
        SELECT '{stream_prefix}' || i, 'Yayın ' || i || ': akşam sohbeti', {planned_sql}
        FROM generate_series(1, {streams}) i;

        INSERT INTO stream_participants (stream_id, user_id, role, position)
        SELECT '{stream_prefix}' || i, '{people_prefix}u' || i || '_' || k, CASE WHEN k = 0 THEN 'creator' ELSE 'guest' END, k
        FROM generate_series(1, {streams}) i, generate_series(0, 2) k;
    """


def expected_starts(deployment, stream_prefix, android=False):
    """What PostgreSQL says should get a start, read from the contract tables (SPEC section 5), not the ledger:
    (stream, push-to-start token) of every iOS device with both tokens, of the creator and guests of each scheduled
    stream, whose user has not turned live_stream off; with `android` (`ANDROID_COUNTDOWN=on`, SPEC 10.4) also
    (stream, FCM token) of every such Android device with an FCM token."""
    android_devices = "OR (d.platform = 'android' AND coalesce(d.fcm_token, '') <> '')" if android else ""
    rows = deployment.sql(f"""
        SELECT p.stream_id, CASE WHEN d.platform = 'android' THEN d.fcm_token ELSE d.push_to_start_token END
        FROM streams s
        JOIN stream_participants p ON p.stream_id = s.id
        JOIN devices d ON d.user_id = p.user_id
        LEFT JOIN notification_preferences np ON np.user_id = p.user_id AND np.category = 'live_stream'
        WHERE s.id LIKE '{stream_prefix}%' AND s.status = 'scheduled'
          AND ((d.platform = 'ios' AND coalesce(d.fcm_token, '') <> '' AND coalesce(d.push_to_start_token, '') <> '')
               {android_devices})
          AND coalesce(np.enabled, true)
    """, single_transaction=False)
    return {(row[0], row[1]) for row in rows}


def ledger_counts(deployment, stream_prefix):
    rows = deployment.sql(f"""
        SELECT status || coalesce(':' || split_part(reason, ':', 1), ''), count(*), coalesce(sum(greatest(attempts - 1, 0)), 0)
        FROM countdown_start_ledger WHERE stream_id LIKE '{stream_prefix}%' GROUP BY 1 ORDER BY 1
    """, single_transaction=False)
    return {row[0]: int(row[1]) for row in rows}, sum(int(row[2]) for row in rows)


def compare(expected, accepted_keys):
    """lost: expected but never accepted; duplicated: accepted more than once (extra copies); unexpected: accepted but
    not expected."""
    counts = collections.Counter(accepted_keys)
    lost = len(expected - set(counts))
    duplicated = sum(count - 1 for count in counts.values() if count > 1)
    unexpected = sum(count for key, count in counts.items() if key not in expected)
    return {"expected": len(expected), "accepted": sum(counts.values()), "lost": lost, "duplicated": duplicated, "unexpected": unexpected}


class PushTally:
    """Accumulates the fake's accepted messages by kind, read incrementally from its record file."""

    def __init__(self, fake):
        self.fake = fake
        self.starts = []  # (key, receivedAt)
        self.reminders = []  # (stream, receivedAt)
        self.other = 0
        # Running counts, so that polling while a million pushes arrive costs each poll only what is new (the
        # harness shares the cores with the system it measures).
        self.starts_by_stream = {}
        self.reminders_by_stream = {}

    def refresh(self):
        for record in self.fake.new_records():
            key = start_key(record)
            if key is not None:
                self.starts.append((key, record["receivedAt"]))
                self.starts_by_stream[key[0]] = self.starts_by_stream.get(key[0], 0) + 1
                continue
            stream = reminder_stream(record)
            if stream is not None:
                self.reminders.append((stream, record["receivedAt"]))
                self.reminders_by_stream[stream] = self.reminders_by_stream.get(stream, 0) + 1
            else:
                self.other += 1
        return self

    def start_count(self, stream_prefix):
        """Start pushes accepted for streams whose id starts with `stream_prefix` (duplicates included)."""
        return sum(count for stream, count in self.starts_by_stream.items() if stream.startswith(stream_prefix))

    def reminder_count(self, stream):
        return self.reminders_by_stream.get(stream, 0)

    def start_keys(self, stream_prefix):
        return [key for key, _ in self.starts if key[0].startswith(stream_prefix)]

    def start_times(self, stream_prefix):
        return [at for key, at in self.starts if key[0].startswith(stream_prefix)]
