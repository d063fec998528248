"""scripts/rehearse-upgrade: a rolling upgrade across a schema migration, rehearsed on this machine.

The order is the one Kubernetes follows with the manifests in deploy/kubernetes (docs/upgrading.md): old workers
run on the old schema; a new pod's `migrate` init container applies the new versions while the old workers keep
working; new workers start and become ready; old workers get SIGTERM one at a time. Start bursts fall before,
during and after each step. At the end the start pushes the fake FCM accepted are compared with what PostgreSQL
says should have been sent: nothing lost, nothing duplicated. A new worker started before the migration must
report not ready (`/readyz` 503 naming the schema) and claim nothing (its schema gate holds the dispatcher, relay
and reconciler back). Then the rollback: the previous release's workers start on the new schema (migrations are
forward-only, so a rollback changes only the image) and must become ready, the new workers get SIGTERM one at a
time, and two more bursts must be sent by the old release alone.

The old build is `COUNTDOWN_OLD_BIN_DIR` (countdown-worker and countdown-admin of the older commit); the new one
is `COUNTDOWN_BIN_DIR` (this tree), which also provides countdown-fake-fcm.
"""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chaos import Scenario, log  # noqa: E402
from countdown_system import HarnessError, Servers, seed_people_sql, seed_streams_sql, expected_starts, wait_for  # noqa: E402


class TwoBuilds(Servers):
    """Servers whose worker and admin binaries come from the old build until `upgrade()`."""

    def __init__(self):
        super().__init__()
        self.old_bin_dir = os.environ["COUNTDOWN_OLD_BIN_DIR"]
        self.phase = "old"

    def binary(self, name):
        if self.phase == "old" and name in ("countdown-worker", "countdown-admin"):
            return os.path.join(self.old_bin_dir, name)
        return super().binary(name)


def readiness(worker):
    """(HTTP status, body) of a worker's /readyz."""
    address = worker.metrics_address()
    try:
        with urllib.request.urlopen(f"http://{address}/readyz", timeout=5) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
    except (urllib.error.URLError, OSError) as error:
        return 0, str(error)


def schema_versions(deployment):
    return [int(row[0]) for row in deployment.sql("SELECT version FROM countdown_schema_migrations ORDER BY version", single_transaction=False)]


def version_of(binary):
    result = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30)
    return result.stdout.strip() if result.returncode == 0 else "(no --version: older than the flag)"


def seed_wave(s, wave, streams, due_in):
    """People and `streams` streams of wave `wave` whose T-60 falls `due_in` seconds from now; adds to s.expected."""
    people, prefix = f"{s.people}{wave}w", f"{s.prefix}{wave}."
    s.d.sql(seed_people_sql(people, streams, token_base=wave * 100_000))
    due = int(s.d.db_now()) + due_in
    s.d.sql(seed_streams_sql(people, prefix, streams, f"to_timestamp({due} + {s.d.start_lead})"))
    s.expected |= expected_starts(s.d, prefix)
    return due


def stop_one_at_a_time(s, workers, check_text):
    """SIGTERM to each worker a second apart, as a rolling update does; each must drain and exit 0."""
    for worker in workers:
        s.wait_until(time.time() + 1)
        worker.terminate()
        code = worker.wait(int(s.d.settings["SHUTDOWN_GRACE_SECONDS"]) + 10)
        s.check(code == 0, check_text.format(worker.index, code))
        s.d.retire(worker)


def rehearse(s, servers, streams):
    d = s.d
    old_versions = schema_versions(d)
    log(f"old build {version_of(servers.binary('countdown-worker'))}: schema {old_versions}")
    s.start_workers(2)
    s.due = seed_wave(s, 1, streams, 4)
    s.wait_until(s.due + 1)

    # The new release: its worker started early (as a pod whose init container has not finished would be, or one
    # started by hand) must not report ready on the old schema.
    servers.phase = "new"
    log(f"new build {version_of(servers.binary('countdown-worker'))}")
    early = d.start_worker()
    wait_for(lambda: early.metrics_address() or not early.alive, 60, "the early new worker to serve /readyz")
    status, body = readiness(early)
    needs_schema = status == 503 and "schema" in body
    s.check(needs_schema, f"a new worker on the old schema is not ready ({status} {body.strip()[:160]})")
    wait_for(lambda: any(line.get("msg") == "waiting for the database schema before claiming jobs" for line in early.log_lines()),
             30, "the early new worker to wait for the schema")
    scrape = early.metrics()
    handled = sum(value for key, value in scrape.items() if key.startswith("countdown_jobs_total"))
    s.check(bool(scrape) and handled == 0, f"a new worker on the old schema claims nothing ({handled:.0f} jobs)")
    early.terminate()
    s.check(early.wait(20) == 0, "the early new worker stopped on SIGTERM with exit code 0")
    d.retire(early)

    s.due = seed_wave(s, 2, streams, 3)
    # The migration (the new pod's init container) while old workers process wave 2.
    s.wait_until(s.due)
    applied = d.admin_json("migrate")["applied"]
    new_versions = schema_versions(d)
    s.note(f"migrated {old_versions[-1] if old_versions else 0} → {new_versions[-1]} (applied {applied}) while the old workers ran wave 2")
    s.check(bool(applied), "the new build applied at least one migration")
    s.check(all(w.alive for w in d.workers), "old workers kept running across the migration")

    # New workers come up and become ready; then the old ones get SIGTERM one at a time.
    old_workers = list(d.workers)
    s.due = seed_wave(s, 3, streams, 4)
    new_workers = s.start_workers(2)
    wait_for(lambda: all(readiness(w)[0] == 200 for w in new_workers), 30, "the new workers to be ready")
    stop_one_at_a_time(s, old_workers, "old worker {} stopped with exit code 0 ({})")
    s.due = seed_wave(s, 4, streams, 3)
    s.wait_quiet(90)
    s.check(all(readiness(w)[0] == 200 for w in new_workers), "the new workers are ready after the upgrade")

    # The rollback: the previous image again, on the schema the new release migrated to (nothing is undone).
    servers.phase = "old"
    s.due = seed_wave(s, 5, streams, 4)
    rolled_back = s.start_workers(2)
    wait_for(lambda: all(readiness(w)[0] == 200 for w in rolled_back), 30,
             "the previous release's workers to be ready on the new schema")
    s.check(True, f"the previous release's workers are ready on schema {schema_versions(d)[-1]}")
    stop_one_at_a_time(s, new_workers, "new worker {} stopped with exit code 0 on the rollback ({})")
    s.due = seed_wave(s, 6, streams, 3)
    s.wait_quiet(90)
    s.due = None  # six waves: lateness against one due second would mean nothing
    s.check(all(w.alive for w in rolled_back) and all(readiness(w)[0] == 200 for w in rolled_back),
            "the previous release's workers are running and ready at the end")
    s.check(d.queue_counts()[3] == 0, "no dead letters")


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    streams = int(os.environ.get("COUNTDOWN_REHEARSE_STREAMS", "60"))
    servers = TwoBuilds()
    servers.restart_postgres({"synchronous_commit": "on"})
    s = Scenario(servers, 0, "rolling upgrade across a migration", quick=True,
                 settings={"WORKER_CONCURRENCY": "16", "SHUTDOWN_GRACE_SECONDS": "10"})
    s.prefix, s.people = "up.", "upp"
    try:
        rehearse(s, servers, streams)
        result = s.result()
    except HarnessError as error:
        s.check(False, str(error))
        result = s.result()
    finally:
        s.close()
    for text in result["details"]:
        log(text)
    for check in result["checks"]:
        log(("ok   " if check["passed"] else "FAIL ") + check["text"])
    log(f"starts: expected {result['expected']}, accepted {result['accepted']}, lost {result['lost']}, "
        f"duplicated {result['duplicated']}, unexpected {result['unexpected']} ({result['seconds']}s)")
    print(json.dumps({k: result[k] for k in ("expected", "accepted", "lost", "duplicated", "unexpected", "passed", "seconds")}))
    sys.exit(0 if result["passed"] else 1)


if __name__ == "__main__":
    main()
