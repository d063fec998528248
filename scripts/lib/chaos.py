"""scripts/chaos: faults injected into the whole system, with exact loss and duplicate counts.

Every scenario gets its own database, Redis namespace, fake FCM and workers on the shared throwaway
PostgreSQL and Redis. It seeds a known set of streams and devices (each device belongs to exactly one stream),
records what PostgreSQL says should get a start (read from the contract tables before anything is sent),
injects its fault, waits until the system is quiet (outbox drained, no open ledger row, every start fan-out
finished, nothing due or leased in Redis, no new accepted push for a while), then compares the start pushes
the fake FCM accepted with that set:

  lost        expected (stream, push-to-start token) pairs never accepted
  duplicated  extra copies of accepted pairs
  unexpected  accepted pairs PostgreSQL did not ask for

and checks the scenario's own bound. `--quick` runs a small version of every scenario (part of scripts/test).
"""

import argparse
import collections
import json
import math
import os
import random
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from countdown_system import (  # noqa: E402
    Deployment, HarnessError, PushTally, Servers, compare, expected_starts, is_android_start, ledger_counts, parse_iso_time,
    percentile, seed_people_sql, seed_streams_sql, wait_for)
from sentinel_set import SentinelSet  # noqa: E402
import chaos_devices  # noqa: E402

# The queue's retry policy (DelayQueue.RetryPolicy defaults): backoff base × 2^(attempt−1), half of it jittered.
BACKOFF_BASE_SECONDS = 2.0
BACKOFF_JITTER = 0.5


def log(message):
    print(f"  {time.strftime('%H:%M:%S')} {message}", file=sys.stderr, flush=True)


class Scenario:
    """One scenario's deployment, seed, expectations and findings."""

    def __init__(self, servers, number, title, quick, settings=None, latency_ms=30):
        self.servers = servers
        self.number = number
        self.title = title
        self.quick = quick
        self.started = time.time()
        self.deployment = Deployment(servers, f"chaos{number}", settings=settings, fake_debug=True)
        self.fake = self.deployment.fake
        if latency_ms:
            self.fake.fault({"latencyMs": latency_ms})
        self.tally = PushTally(self.fake)
        self.prefix = f"c{number}."
        self.people = f"c{number}p"
        self.expected = set()
        self.due = None
        self.details = []
        self.checks = []  # (passed, text)
        self.duplicate_bound = 0
        self.duplicate_bound_text = "0"
        # A scenario that judges by its own counts (scenario 20's device model) sets them here.
        self.counts = None
        # With the Android countdown on, Android devices' countdown starts are expected and counted too.
        self.android = (settings or {}).get("ANDROID_COUNTDOWN") == "on"

    @property
    def d(self):
        return self.deployment

    def size(self, quick, full):
        return quick if self.quick else full

    def start_workers(self, count, overrides=None):
        workers = [self.d.start_worker(overrides) for _ in range(count)]
        wait_for(lambda: all(w.metrics_address() or not w.alive for w in workers), 60, "the workers to start")
        for worker in workers:
            if not worker.alive:
                raise HarnessError(f"worker exited at start with {worker.exit_code}; see {worker.log_path}")
        return workers

    def seed(self, streams, due_in=6):
        """People and `streams` streams whose T-60 falls `due_in` seconds from now; returns the due second."""
        self.d.sql(seed_people_sql(self.people, streams))
        self.due = math.ceil(self.d.db_now()) + due_in
        self.d.sql(seed_streams_sql(self.people, self.prefix, streams, f"to_timestamp({self.due} + {self.d.start_lead})"))
        self.snapshot_expected()
        self.d.wait_outbox_drained(max(1, self.due - time.time() - 0.5))
        return self.due

    def snapshot_expected(self):
        self.expected = expected_starts(self.d, self.prefix, android=self.android)

    def wait_until(self, moment):
        wait_for(lambda: time.time() >= moment, 600, "the scenario's moment", every=0.02)

    def accepted_keys(self):
        return self.tally.refresh().start_keys(self.prefix)

    def all_accepted(self):
        return self.expected <= set(self.accepted_keys())

    # Quiescence

    def _open_work(self):
        """What is still going on (empty when quiet)."""
        d, prefix = self.d, self.prefix
        open_rows, unfinished = d.sql(f"""
            SELECT (SELECT count(*) FROM countdown_start_ledger WHERE stream_id LIKE '{prefix}%' AND status IN ('pending', 'sending')),
                   (SELECT count(*) FROM streams s LEFT JOIN countdown_stream_progress p ON p.stream_id = s.id
                    WHERE s.id LIKE '{prefix}%' AND s.status = 'scheduled' AND s.planned_start_at - make_interval(secs => {d.start_lead}) <= now()
                      AND p.start_done_for IS DISTINCT FROM s.planned_start_at)
        """, single_transaction=False)[0]
        due, _, leased, _ = d.queue_counts()
        problems = []
        if d.outbox_backlog():
            problems.append("outbox rows")
        if int(open_rows):
            problems.append(f"{open_rows} open ledger rows")
        if int(unfinished):
            problems.append(f"{unfinished} start fan-outs unfinished")
        if due or leased:
            problems.append(f"{due} due and {leased} leased jobs")
        return problems

    def wait_quiet(self, timeout, on_poll=None, settle=1.5):
        """Waits until nothing is open and no push arrived for `settle` seconds; False (noted) on timeout."""
        if self.due:
            self.wait_until(self.due + 0.5)
        deadline = time.time() + timeout
        last_count, last_change = -1, time.time()
        problems = ["not checked"]
        while time.time() < deadline:
            if on_poll:
                on_poll()
            count = len(self.tally.refresh().starts) + len(self.tally.reminders)
            if count != last_count:
                last_count, last_change = count, time.time()
            problems = self._open_work()
            if not problems and time.time() - last_change >= settle:
                return True
            time.sleep(0.25)
        self.check(False, f"quiet within {timeout:.0f}s (still: {', '.join(problems)})")
        return False

    # Findings

    def check(self, passed, text):
        self.checks.append((bool(passed), text))

    def note(self, text):
        self.details.append(text)

    def ledger_reclaims(self):
        """Ledger rows claimed more than once (a sender died or failed with them in flight), summed."""
        _, extra_attempts = ledger_counts(self.d, self.prefix)
        return extra_attempts

    def result(self, expected=None):
        counts = self.counts or compare(self.expected if expected is None else expected, self.accepted_keys())
        passed = (counts["lost"] == 0 and counts["unexpected"] == 0 and counts["duplicated"] <= self.duplicate_bound
                  and all(ok for ok, _ in self.checks))
        lateness = [at - self.due for at in self.tally.start_times(self.prefix)] if self.due else []
        if lateness:
            self.note(f"start lateness against the due second: min {min(lateness):+.2f}s, p50 {percentile(lateness, 0.5):.2f}s, "
                      f"max {max(lateness):.2f}s")
        ledger, _ = ledger_counts(self.d, self.prefix)
        self.note("ledger: " + ", ".join(f"{k} {v}" for k, v in sorted(ledger.items())))
        return {"number": self.number, "title": self.title, **counts, "duplicateBound": self.duplicate_bound_text,
                "checks": [{"passed": ok, "text": text} for ok, text in self.checks], "details": self.details,
                "passed": passed, "seconds": round(time.time() - self.started, 1)}

    def close(self):
        self.deployment.close()


def max_attempts_within(seconds):
    """How many attempts one job can make within `seconds` when every backoff is as short as jitter allows."""
    attempts, at = 1, 0.0
    while True:
        at += BACKOFF_BASE_SECONDS * (2 ** (attempts - 1)) * (1 - BACKOFF_JITTER)
        if at >= seconds:
            return attempts
        attempts += 1


# MARK: - Scenarios


def outcomes_kept(s):
    """How often a worker kept start outcomes in memory because PostgreSQL refused to record them."""
    return sum(1 for w in s.d.workers + s.d.retired for line in w.log_lines()
               if line.get("msg") == "could not record start outcomes; keeping them to write again")


def worker_id(worker):
    """The id a worker records with its claims (its "worker starting" log line)."""
    wait_for(lambda: any(line.get("msg") == "worker starting" for line in worker.log_lines()), 30, "the worker's id")
    return next(line.get("worker") for line in worker.log_lines() if line.get("msg") == "worker starting")


def kill_and_record(s, victim):
    """SIGKILLs `victim` and returns the (stream, push-to-start token) pairs (FCM token for an Android countdown) it held
    claimed and not settled: its pushes in flight (or claimed for its current page), the only starts its death may
    repeat."""
    owner = worker_id(victim)
    victim.kill()
    rows = s.d.sql(f"""
        SELECT l.stream_id, CASE WHEN d.platform = 'android' THEN d.fcm_token ELSE d.push_to_start_token END
        FROM countdown_start_ledger l JOIN devices d ON d.device_id = l.device_id
        WHERE l.stream_id LIKE '{s.prefix}%' AND l.status = 'sending' AND l.claimed_by = '{owner}'
    """, single_transaction=False)
    return {(row[0], row[1]) for row in rows}


def report_kills(s, kills):
    """Notes, per kill, the pushes in flight and the duplicates among them; the duplicate bound is their sum."""
    counts = collections.Counter(s.accepted_keys())
    total_in_flight, total_duplicated = 0, 0
    for index, (at, in_flight) in enumerate(kills, 1):
        duplicated = sum(counts[key] - 1 for key in in_flight if counts[key] > 1)
        total_in_flight += len(in_flight)
        total_duplicated += duplicated
        s.note(f"kill {index} at {at - s.due:+.1f}s: {len(in_flight)} pushes in flight, {duplicated} duplicated")
    s.duplicate_bound = total_in_flight
    s.duplicate_bound_text = f"≤ {total_in_flight} in flight"
    return total_in_flight, total_duplicated


def scenario_kill_workers(s):
    """1. SIGKILL a random worker every 2 s during a burst (workers restarted): lost 0; duplicated ≤ pushes in flight."""
    s.start_workers(3)
    due = s.seed(s.size(400, 3000))
    s.wait_until(due)
    kills = []
    rng = random.Random(s.number)
    deadline = time.time() + s.size(40, 120)
    while not s.all_accepted() and time.time() < deadline:
        time.sleep(2)
        victim = rng.choice(s.d.workers)
        kills.append((time.time(), kill_and_record(s, victim)))
        s.d.retire(victim)
        s.d.start_worker()
    s.wait_quiet(s.size(60, 120))
    in_flight, duplicated = report_kills(s, kills)
    s.note(f"{len(kills)} workers SIGKILLed and restarted: {in_flight} pushes in flight at the kills, {duplicated} duplicated")
    s.check(len(kills) >= s.size(3, 10), f"at least {s.size(3, 10)} kills during the burst ({len(kills)})")


def scenario_kill_workers_android(s):
    """19. Scenario 1 with ANDROID_COUNTDOWN=on: the Android devices' countdown starts go through the same ledger, so
    lost 0 and duplicated ≤ pushes in flight hold for both platforms together."""
    scenario_kill_workers(s)
    android = sum(1 for key in s.expected if is_android_start(key))
    accepted = sum(1 for key in set(s.accepted_keys()) if is_android_start(key))
    s.note(f"{android} Android countdown starts expected, {accepted} accepted")
    s.check(android > 0 and accepted == android, f"every Android device got its countdown start ({accepted}/{android})")


def scenario_takeover(s):
    """15. SIGKILL one of three workers mid-burst, no restart: the survivors take its work over; the last start
    arrives at most 10 s after the kill, duplicated ≤ its pushes in flight."""
    s.start_workers(3)
    due = s.seed(s.size(600, 3000))
    s.wait_until(due + 0.3)
    busiest = max(s.d.workers, key=lambda w: int(s.d.scalar(
        f"SELECT count(*) FROM countdown_start_ledger WHERE claimed_by = '{worker_id(w)}' AND status = 'sending'")))
    killed = time.time()
    kills = [(killed, kill_and_record(s, busiest))]
    s.d.retire(busiest)
    s.wait_quiet(s.size(60, 120))
    report_kills(s, kills)
    last = max(s.tally.start_times(s.prefix), default=killed)
    takeovers = [line for w in s.d.workers for line in w.log_lines() if line.get("msg") == "took over a dead worker's jobs"]
    first_takeover = min((_log_time(line) for line in takeovers), default=None)
    s.note(f"killed {worker_id(busiest)} {killed - due:+.1f}s after the due second; its jobs handed back "
           + (f"{first_takeover - killed:.1f}s after the kill" if first_takeover else "by lease expiry")
           + f"; last start {last - killed:.1f}s after the kill")
    s.check(last - killed <= 10, f"last start at most 10 s after the kill ({last - killed:.1f}s)")


def scenario_redis_restart(s):
    """2. Redis killed and restarted (AOF, appendfsync everysec) during a burst: lost 0."""
    s.start_workers(2)
    due = s.seed(s.size(300, 2000))
    s.wait_until(due + 1)
    before = len(s.accepted_keys())
    s.servers.kill_redis()
    down = time.time()
    time.sleep(2)
    s.servers.start_redis()
    s.note(f"Redis SIGKILLed {time.time() - due - 2:.1f}s after the due second with {before} of {len(s.expected)} starts accepted, "
           f"restarted from its AOF after {time.time() - down:.1f}s")
    s.wait_quiet(s.size(90, 180))
    alive = sum(1 for w in s.d.workers if w.alive)
    s.check(alive == len(s.d.workers), f"every worker kept running ({alive}/{len(s.d.workers)})")
    s.duplicate_bound = s.ledger_reclaims()
    s.duplicate_bound_text = f"≤ {s.duplicate_bound} re-claimed"


def scenario_redis_flush(s):
    """3. Redis FLUSHALL an hour before the starts: the reconciler rebuilds the jobs; lost 0."""
    s.start_workers(2)
    due = s.seed(s.size(300, 1000), due_in=s.size(14, 20))
    waiting = sum(s.d.queue_counts()[:2])
    s.servers.redis("FLUSHALL")
    flushed_at = time.time()
    after = sum(s.d.queue_counts()[:2])
    s.note(f"FLUSHALL {due - flushed_at:.1f}s before the T-60 due second (planned starts an hour later): {waiting} jobs -> {after}")
    s.check(waiting >= len({stream for stream, _ in s.expected}) and after == 0, "the flush emptied a queue that held every start job")
    s.wait_quiet(s.size(60, 120))
    repairs = [line for w in s.d.workers for line in w.log_lines()
               if line.get("msg") == "reconciler repaired the queue" and _log_time(line) >= flushed_at]
    if repairs:
        repairs.sort(key=_log_time)
        s.note(f"reconciler (RECONCILE_INTERVAL_SECONDS={s.d.settings['RECONCILE_INTERVAL_SECONDS']}) repaired the queue: "
               + "; ".join(f"+{_log_time(line) - flushed_at:.1f}s added {line.get('added')}" for line in repairs))
    s.check(bool(repairs), "a reconciler run rebuilt the jobs")


def scenario_postgres_restart(s):
    """4. PostgreSQL stopped (immediate) and restarted during a burst: lost 0, workers never exit."""
    s.start_workers(2)
    due = s.seed(s.size(300, 2000))
    s.wait_until(due + 1)
    before = len(s.accepted_keys())
    s.servers.stop_postgres(mode="immediate")
    down = time.time()
    exits = []

    def watch():
        for worker in s.d.workers:
            if not worker.alive and worker not in exits:
                exits.append(worker)
    while time.time() - down < 3:
        watch()
        time.sleep(0.1)
    s.servers.start_postgres()
    s.note(f"PostgreSQL stopped (-m immediate) 1s after the due second with {before} of {len(s.expected)} starts accepted, "
           f"started again after {time.time() - down:.1f}s")
    s.wait_quiet(s.size(90, 180), on_poll=watch)
    watch()
    s.check(not exits, f"no worker exited ({len(exits)} did)")
    # Outcomes of pushes sent while PostgreSQL was away are kept in memory and written once it is back.
    s.note(f"ledger rows claimed more than once: {s.ledger_reclaims()}; settlements kept in memory and retried: {outcomes_kept(s)}")


def scenario_postgres_connections_killed(s):
    """14. The workers' PostgreSQL connections killed (pg_terminate_backend) every 2 s during a burst: lost 0, duplicated 0."""
    s.start_workers(2)
    due = s.seed(s.size(400, 3000))
    s.wait_until(due)
    rounds, terminated = 0, 0
    deadline = time.time() + s.size(30, 90)
    while not s.all_accepted() and time.time() < deadline:
        terminated += int(s.d.scalar(
            "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()) t"))
        rounds += 1
        time.sleep(2)
    s.wait_quiet(s.size(90, 180))
    alive = sum(1 for w in s.d.workers if w.alive)
    s.note(f"{rounds} rounds of pg_terminate_backend, {terminated} connections killed; ledger rows claimed more than once: "
           f"{s.ledger_reclaims()}; settlements kept in memory and retried: {outcomes_kept(s)}")
    s.check(rounds >= 2, f"connections killed during the burst ({rounds} rounds)")
    s.check(alive == len(s.d.workers), f"every worker kept running ({alive}/{len(s.d.workers)})")


def scenario_fcm_unavailable(s):
    """5. FCM answers 503 for 20 s, then recovers: lost 0, requests during the outage bounded by the backoff."""
    outage = s.size(10, 20)
    s.start_workers(2)
    due = s.seed(s.size(60, 300))
    s.wait_until(due - 1)
    s.fake.fault({"status": 503, "errorCode": "UNAVAILABLE", "forSeconds": outage})
    began = time.time()
    s.wait_quiet(outage + s.size(60, 90))
    during = [r for r in s.fake.request_log() if began <= r["at"] < began + outage]
    rejected = sum(1 for r in during if r["status"] == 503)
    attempts = max_attempts_within(outage)
    bound = len(s.expected) * attempts
    per_second = {}
    for request in during:
        per_second[int(request["at"] - began)] = per_second.get(int(request["at"] - began), 0) + 1
    s.note(f"503 for {outage}s from 1s before the due second: {len(during)} requests during the outage ({rejected} answered 503); "
           f"bound {len(s.expected)} pushes × {attempts} attempts = {bound}")
    s.note("requests per second of the outage: " + " ".join(str(per_second.get(i, 0)) for i in range(outage)))
    s.check(len(during) <= bound, f"requests during the outage ≤ backoff bound ({len(during)} ≤ {bound})")
    s.check(rejected > 0, "the outage was hit")


def scenario_fcm_quota(s):
    """6. FCM answers 429 with Retry-After: 5: no request for that work before 5 s; lost 0."""
    window = s.size(6, 20)
    s.start_workers(2)
    due = s.seed(s.size(40, 200))
    s.wait_until(due - 1)
    s.fake.fault({"status": 429, "errorCode": "QUOTA_EXCEEDED", "retryAfter": 5, "forSeconds": window})
    s.wait_quiet(window + s.size(40, 60))
    by_token = {}
    for request in s.fake.request_log():
        by_token.setdefault(request["token"], []).append(request)
    throttled, gaps, early = 0, [], 0
    for requests in by_token.values():
        requests.sort(key=lambda r: r["at"])
        for first, then in zip(requests, requests[1:]):
            if first["status"] == 429:
                gaps.append(then["at"] - first["at"])
                early += 1 if then["at"] - first["at"] < 5 - 0.01 else 0
        throttled += sum(1 for r in requests if r["status"] == 429)
    s.note(f"429 (Retry-After: 5) for {window}s: {throttled} answered 429; shortest wait before the same token came again "
           f"{min(gaps):.2f}s" if gaps else f"429 for {window}s: {throttled} answered 429")
    s.check(throttled > 0, "the quota was hit")
    s.check(early == 0, f"no request for throttled work before 5s ({early} early)")


def scenario_unregistered(s):
    """7. 10% of tokens UNREGISTERED: cleared, never retried, everything else delivered."""
    s.start_workers(2)
    due = s.seed(s.size(100, 1000))
    rng = random.Random(s.number)
    chosen = rng.sample(sorted(s.expected), max(1, len(s.expected) // 10))
    pts_list = ",".join(f"'{pts}'" for _, pts in chosen)
    dead = dict((row[0], row[1]) for row in s.d.sql(
        f"SELECT device_id, fcm_token FROM devices WHERE push_to_start_token IN ({pts_list})", single_transaction=False))
    s.fake.fault([{"token": token, "status": 404, "errorCode": "UNREGISTERED"} for token in dead.values()])
    s.wait_until(due)
    s.wait_quiet(s.size(40, 90))
    live = s.expected - set(chosen)
    requests = s.fake.request_log()
    suffixes = {token[-8:] for token in dead.values()}
    per_dead = {}
    for request in requests:
        if request["token"] in suffixes:
            per_dead[request["token"]] = per_dead.get(request["token"], 0) + 1
    device_list = ",".join(f"'{device}'" for device in dead)
    cleared = int(s.d.scalar(f"SELECT count(*) FROM devices WHERE device_id IN ({device_list}) AND fcm_token IS NULL"))
    failed = int(s.d.scalar(f"""SELECT count(*) FROM countdown_start_ledger WHERE device_id IN ({device_list})
                                AND status = 'failed' AND reason LIKE 'dead_token:%'"""))
    s.note(f"{len(dead)} of {len(s.expected)} tokens UNREGISTERED: {cleared} cleared, {failed} ledger rows failed as dead_token, "
           f"requests per dead token: {sorted(set(per_dead.values()))}")
    s.check(cleared == len(dead), f"every dead token cleared ({cleared}/{len(dead)})")
    s.check(len(per_dead) == len(dead) and all(n == 1 for n in per_dead.values()), "each dead token was tried exactly once")
    s.check(failed == len(dead), f"ledger records each dead token ({failed}/{len(dead)})")
    return live


def scenario_fast_clock(s):
    """8. A worker whose clock runs 10 minutes fast (libfaketime): no start earlier than its due second."""
    s.start_workers(1)
    fast = s.d.start_worker(clock_offset="+10m")
    wait_for(lambda: fast.metrics_address() or not fast.alive, 60, "the fast worker to start")
    s.check(fast.alive, "the fast-clock worker runs")
    due = s.seed(s.size(100, 500))
    s.wait_quiet(s.size(30, 150))
    times = s.tally.start_times(s.prefix)
    early = sum(1 for at in times if at < due)
    fast_jobs = sum(1 for line in fast.log_lines() if line.get("msg") in ("job done", "job will be retried") and line.get("kind") == "start")
    stats = s.fake.stats()
    s.note(f"one worker at +10 min (FAKETIME=+10m) beside a normal one; it handled {fast_jobs} start job attempts; "
           f"fake FCM token grants {stats.get('tokensIssued')}, refused {stats.get('tokensRefused')}")
    s.check(early == 0, f"no start before its due second ({early} early)")


def scenario_poison(s):
    """9. Poison jobs and rows: dead-lettered or skipped with a reason, nothing else disturbed."""
    s.start_workers(2, {"JOB_MAX_ATTEMPTS": "3"})
    streams = s.size(50, 200)
    s.d.sql(seed_people_sql(s.people, streams + 3))
    due = math.ceil(s.d.db_now()) + 7
    planned = f"to_timestamp({due} + {s.d.start_lead})"
    x, p = s.prefix + "x", s.people
    s.d.sql(seed_streams_sql(s.people, s.prefix, streams, planned) + f"""
        INSERT INTO streams (id, title, planned_start_at)
        VALUES ('{x}big', repeat('Çok uzun bir başlık 🎉 ', 4500), {planned}),
               ('{x}deleted', 'Konuğu silinen yayın', {planned}),
               ('{x}nocreator', 'Yaratıcısı silinen yayın', {planned});
        INSERT INTO stream_participants (stream_id, user_id, role, position)
        SELECT '{x}' || name, '{p}u' || ({streams} + n) || '_' || k, CASE WHEN k = 0 THEN 'creator' ELSE 'guest' END, k
        FROM (VALUES ('big', 1), ('deleted', 2), ('nocreator', 3)) AS t(name, n), generate_series(0, 2) k;
        DELETE FROM users WHERE id IN ('{p}u{streams + 2}_1', '{p}u{streams + 3}_0');
        INSERT INTO users (id, display_name) VALUES ('{p}empty', 'Boş jeton');
        INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token) VALUES
            ('{p}empty-both', '{p}empty', 'ios', '', ''),
            ('{p}empty-pts', '{p}empty', 'ios', 'fcm-empty-pts-00000001', ''),
            ('{p}empty-fcm', '{p}empty', 'ios', '', 'pts-empty-fcm');
        DELETE FROM countdown_outbox WHERE topic = 'device';
        INSERT INTO stream_participants (stream_id, user_id, role, position) VALUES ('{s.prefix}1', '{p}empty', 'guest', 3);
    """)
    s.due = due
    s.snapshot_expected()
    title_bytes = int(s.d.scalar(f"SELECT octet_length(title) FROM streams WHERE id = '{x}big'"))
    poison = {
        "start:c9poison-unreadable": b"\xff\xfe not a job",
        "start:c9poison-json": b"start\x00{not json",
        "teleport:c9poison-kind": b"teleport\x00{}",
        "start:c9.missing": b'start\x00{"stream":"c9.missing"}',
    }
    seconds, micros = s.servers.redis("TIME").split()
    now_ms = int(seconds) * 1000 + int(micros) // 1000
    for job, data in poison.items():
        s.servers.redis("HSET", s.d.queue_key("data"), job, stdin=data)
        s.servers.redis("ZADD", s.d.queue_key("due"), now_ms, job)
    s.wait_until(due)
    s.wait_quiet(s.size(45, 60))
    dead = {letter["id"]: letter for letter in s.d.admin_json("dead", "list")}
    for job in ("start:c9poison-unreadable", "start:c9poison-json", "teleport:c9poison-kind"):
        letter = dead.get(job)
        s.check(letter is not None, f"{job} dead-lettered" + (f" ({letter['attempts']} attempts: {letter['lastError'][:70]})" if letter else ""))
    s.check("start:c9.missing" not in dead, "a start job for a missing stream is skipped, not dead-lettered")
    skipped = dict((row[0], row[1]) for row in s.d.sql(
        f"SELECT device_id, status || ':' || coalesce(reason, '') FROM countdown_start_ledger WHERE device_id LIKE '{p}empty%'",
        single_transaction=False))
    s.note("empty-token devices in the ledger: " + ", ".join(f"{k.split('-', 1)[1]} {v}" for k, v in sorted(skipped.items())))
    s.check(len(skipped) == 3 and all(v.startswith("skipped:") for v in skipped.values()), "empty-token devices skipped with a reason")
    big = [r for r in s.fake.all_records() if r.get("event") == "start"
           and r["message"]["apns"]["payload"]["aps"]["attributes"]["streamId"] == f"{x}big"]
    sizes = [(len(json.dumps(r["message"]["apns"]["payload"]["aps"]["attributes"], ensure_ascii=False).encode()),
              len(json.dumps(r["message"]["apns"]["payload"]["aps"]["content-state"], ensure_ascii=False).encode())) for r in big]
    s.note(f"{title_bytes // 1024} KB title: {len(big)} starts, attributes/content-state bytes {sorted(set(sizes))}")
    s.check(big and all(a < 4096 and c < 4096 for a, c in sizes), "the 100 KB title was truncated under 4 KB and delivered")
    deleted = s.d.sql(f"SELECT stream_id, count(*) FROM stream_participants WHERE stream_id IN ('{x}deleted', '{x}nocreator') GROUP BY 1",
                      single_transaction=False)
    s.note("streams with a deleted user keep " + ", ".join(f"{row[0].split('.')[-1]}: {row[1]} participants" for row in deleted)
           + " (the schema cascades a user's participant rows)")
    alive = sum(1 for w in s.d.workers if w.alive)
    s.check(alive == len(s.d.workers), f"every worker kept running ({alive}/{len(s.d.workers)})")


def scenario_sigterm(s):
    """10. SIGTERM during a burst: the worker exits 0 within the grace period; nothing lost."""
    grace = int(s.d.settings["SHUTDOWN_GRACE_SECONDS"])
    s.start_workers(2)
    due = s.seed(s.size(300, 2000))
    s.wait_until(due + 1.5)
    victim = s.d.workers[0]
    before = len(s.accepted_keys())
    victim.terminate()
    signalled = time.time()
    s.d.start_worker()
    code = victim.wait(grace + 10)
    took = (victim.exited_at or time.time()) - signalled
    handed_back = sum(line.get("jobs", 0) for line in victim.log_lines() if line.get("msg") == "handed back unfinished jobs")
    s.d.retire(victim)
    s.note(f"SIGTERM 1.5s after the due second with {before} of {len(s.expected)} starts accepted; exit code {code} after {took:.2f}s "
           f"(grace {grace}s), {handed_back} jobs handed back; a replacement worker started at once")
    s.check(code == 0, f"exit code 0 ({code})")
    s.check(took <= grace, f"exited within the grace period ({took:.2f}s ≤ {grace}s)")
    s.wait_quiet(s.size(60, 120))


def scenario_held_rows(s):
    """11. The backend holds FOR UPDATE on some streams' rows for 40 s during a burst: the others start on time, the
    held ones right after the release."""
    hold = s.size(12, 40)
    streams = s.size(200, 1000)
    s.start_workers(2)
    due = s.seed(streams)
    held = {f"{s.prefix}{i}" for i in range(1, streams + 1, 10)}
    listed = ", ".join(f"'{stream}'" for stream in sorted(held))
    s.wait_until(due - 2)
    holder = subprocess.Popen(
        ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", s.d.database_url, "-f", "-"], stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
    holder.stdin.write(f"BEGIN;\nSELECT id FROM streams WHERE id IN ({listed}) FOR UPDATE;\nSELECT pg_sleep({hold});\nCOMMIT;\n")
    holder.stdin.close()
    wait_for(lambda: int(s.d.scalar("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'SELECT pg_sleep%'")) > 0, 10,
             "the backend transaction to hold the rows")
    taken = time.time()
    code = holder.wait(hold + 30)
    released = time.time()
    s.note(f"{len(held)} of {streams} streams held FOR UPDATE from {taken - due:+.1f}s to {released - due:+.1f}s against the due "
           f"second (psql exit {code})")
    s.wait_quiet(s.size(60, 120))
    s.tally.refresh()
    free_times = [at for key, at in s.tally.starts if key[0].startswith(s.prefix) and key[0] not in held]
    held_times = [at for key, at in s.tally.starts if key[0] in held]
    free_late = max((at - due for at in free_times), default=0.0)
    s.check(free_times and free_late <= 5, f"the streams not held started on time (latest {free_late:.2f}s after the due second, bound 5s)")
    if held_times:
        s.check(min(held_times) >= released - 0.5, f"no held stream started before the release (first {min(held_times) - released:+.2f}s)")
        s.check(max(held_times) - released <= 5, f"the held streams started right after the release (last {max(held_times) - released:+.2f}s, "
                                                  "bound 5s)")
    else:
        s.check(False, "the held streams started")


def scenario_wrong_project(s):
    """12. Every send answered SENDER_ID_MISMATCH for 10 s of a burst (a wrong Firebase project): the token guard
    clears at most TOKEN_GUARD_MIN_REFUSALS tokens, `tokens restore` brings them back (and their starts go out),
    everything is delivered once."""
    window = 10
    s.start_workers(2)
    due = s.seed(s.size(200, 1000))
    s.wait_until(due - 1)
    s.fake.fault({"status": 403, "errorCode": "SENDER_ID_MISMATCH", "forSeconds": window})
    began = time.time()
    tripped = []

    def watch():
        tripped.append(any(w.metrics().get("countdown_push_token_guard_tripped") == 1 for w in s.d.workers if w.alive))

    wait_for(lambda: time.time() >= began + window, 60, "the misconfiguration window", every=0.5)
    watch()
    # Held refusals are retried 60 s later, once the project is right again.
    s.wait_quiet(s.size(120, 150))
    people = f"{s.people}%"
    cleared = [row[0] for row in s.d.sql(
        f"SELECT push_to_start_token FROM devices WHERE device_id LIKE '{people}' AND fcm_token IS NULL", single_transaction=False)]
    restored = s.d.admin_json("tokens", "restore", "--since", "10m", "--reason", "SENDER_ID_MISMATCH", "--yes")
    left = int(s.d.scalar(f"SELECT count(*) FROM devices WHERE device_id LIKE '{people}' AND fcm_token IS NULL"))
    rejected = sum(1 for r in s.fake.request_log() if r["status"] == 403)
    s.note(f"SENDER_ID_MISMATCH for {window}s from 1s before the due second: {rejected} sends refused; {len(cleared)} FCM tokens "
           f"cleared before the guard tripped; tokens restore: {restored}")
    s.check(rejected >= 20, f"the misconfiguration was hit ({rejected} refusals)")
    s.check(any(tripped), "countdown_push_token_guard_tripped was 1 on a worker")
    s.check(len(cleared) <= 20, f"at most TOKEN_GUARD_MIN_REFUSALS tokens cleared ({len(cleared)} ≤ 20)")
    s.check(left == 0, f"tokens restore brought every cleared token back ({left} left)")
    # The restored tokens queue a backfill for their devices, which re-opens and sends their starts.
    s.wait_quiet(s.size(60, 90))


def scenario_pause(s):
    """13. `countdown-admin pause --kind start` for 30 s in the middle of a burst, then `resume`: lost 0, duplicated 0."""
    pause = s.size(8, 30)
    s.start_workers(2)
    due = s.seed(s.size(300, 2000))
    s.wait_until(due + 0.5)
    before = len(s.accepted_keys())
    s.d.admin_json("pause", "--kind", "start", "--reason", "chaos", "--yes")
    paused_at = time.time()
    wait_for(lambda: s.d.queue_counts()[2] == 0, 30, "the running start jobs to finish", every=0.1)
    settled = len(s.accepted_keys())
    wait_for(lambda: time.time() >= paused_at + pause, pause + 5, "the pause", every=0.25)
    during = len(s.accepted_keys())
    stats = s.d.admin_json("stats")
    s.d.admin_json("resume")
    s.note(f"paused {pause}s from 0.5s after the due second: {before} starts accepted at the pause, {settled} once running jobs "
           f"finished, {during} at the resume; stats showed {stats.get('pausedJobs')} held jobs")
    s.check(during == settled, f"nothing claimed while paused ({settled} → {during})")
    s.check(during < len(s.expected), "the pause came in the middle of the burst")
    s.check(stats.get("pausedJobs", 0) > 0, "stats showed the held jobs")
    s.wait_quiet(s.size(60, 120))


def scenario_pause_redis_loss(s):
    """18. `pause --kind start` before the starts are due, Redis FLUSHALL, `countdown-admin reconcile`: nothing is sent
    while paused (the pause lives in PostgreSQL; the reconcile and every worker mirror it back into Redis); then
    `resume`: lost 0, duplicated 0."""
    hold = s.size(6, 20)
    s.start_workers(2)
    due = s.seed(s.size(100, 500), due_in=s.size(8, 12))
    s.d.admin_json("pause", "--kind", "start", "--reason", "chaos", "--yes")
    s.servers.redis("FLUSHALL")
    flushed_at = time.time()
    report = s.d.admin_json("reconcile")
    wait_for(lambda: time.time() >= max(due, flushed_at) + hold, hold + 30, "the pause", every=0.25)
    sent = len(s.accepted_keys())
    stats = s.d.admin_json("stats")
    paused = [entry.get("kind") for entry in stats.get("paused", [])]
    s.note(f"paused, FLUSHALL {due - flushed_at:.1f}s before the due second, reconcile added {report.get('added')}; {hold}s past "
           f"the due second: {sent} starts accepted, stats (PostgreSQL) showed {paused} paused with {stats.get('pausedJobs')} held jobs")
    s.check(sent == 0, f"nothing sent while paused, after Redis lost its data ({sent} starts)")
    s.check(paused == ["start"], "stats read the pause from PostgreSQL")
    s.check(stats.get("pausedJobs", 0) > 0, "the rebuilt start jobs were held")
    s.d.admin_json("resume")
    s.wait_quiet(s.size(60, 120))


def own_sentinel_set(s):
    """Starts the scenario's own primary, replica and three Sentinels and points the deployment at them."""
    began = time.time()
    sentinels = SentinelSet(os.path.join(s.d.directory, "redis"), s.servers.root, master=f"chaos{s.number}")
    s.d.use_redis(sentinels)
    s.note(f"own Redis set: primary :{sentinels.primary_port}, replica :{sentinels.replica_port}, three Sentinels "
           f"(quorum 2, down-after {sentinels.down_after_ms} ms), ready in {time.time() - began:.1f}s")
    return sentinels


def failover_logs(s):
    """Worker log lines that mention a READONLY reply, and the workers that logged any."""
    lines = [(w, line) for w in s.d.workers + s.d.retired for line in w.log_lines()
             if "READONLY" in json.dumps(line) or "readOnly" in json.dumps(line)]
    return len(lines), len({w.index for w, _ in lines})


def wait_workers_follow(s, since, timeout):
    """Waits until every live worker has beaten its heartbeat into the current primary after `since` (by Redis
    `TIME`, the same clock here); returns the seconds from `since` (beats come every second)."""
    ids = [worker_id(w) for w in s.d.workers if w.alive]

    def followed():
        fields = s.d.redis("ZRANGE", "{" + s.d.namespace + "}:fleet:workers", "0", "-1", "WITHSCORES").split()
        beats = dict(zip(fields[0::2], (float(score) / 1000 for score in fields[1::2])))
        return all(beats.get(worker, 0) >= since for worker in ids)

    wait_for(followed, timeout, "every worker to beat into the new primary", every=0.1)
    return time.time() - since


def scenario_sentinel_failover(s):
    """16. The Redis primary SIGKILLed mid-burst under three Sentinels (quorum 2): the replica is promoted and the
    workers follow. The replica stopped replicating 1 s before the kill (a replica that lags), so what the primary
    took in that second dies with it: acknowledgements, claims, and the jobs of streams created then, which only the
    reconciler can bring back. Lost 0, duplicated 0."""
    sentinels = own_sentinel_set(s)
    late = s.size(20, 100)
    late_people = s.people + "late"
    s.d.sql(seed_people_sql(late_people, late, token_base=50_000_000))
    s.start_workers(2)
    due = s.seed(s.size(300, 2000))
    s.wait_until(due + 0.5)
    before = len(s.accepted_keys())
    # From here the replica stops replicating: what the primary takes now is lost with it.
    sentinels.redis_on(sentinels.replica_port, "REPLICAOF", "NO", "ONE")
    detached = time.time()
    late_due = math.ceil(s.d.db_now()) + 8
    s.d.sql(seed_streams_sql(late_people, s.prefix + "late", late, f"to_timestamp({late_due} + {s.d.start_lead})"))
    s.snapshot_expected()
    s.d.wait_outbox_drained(10)
    late_job = f"start:{s.prefix}late1"
    on_primary = int(sentinels.redis_on(sentinels.primary_port, "HEXISTS", s.d.queue_key("data"), late_job))
    on_replica = int(sentinels.redis_on(sentinels.replica_port, "HEXISTS", s.d.queue_key("data"), late_job))
    s.check(on_primary == 1 and on_replica == 0, f"the late streams' jobs were on the primary only (primary {on_primary}, replica {on_replica})")
    s.wait_until(detached + 1)
    at_kill = len(s.accepted_keys())
    sentinels.kill(sentinels.primary_port)
    killed = time.time()
    took = sentinels.wait_for_primary(sentinels.replica_port)
    followed = wait_workers_follow(s, killed, 60)
    s.note(f"replica detached {detached - due:+.1f}s after the due second with {before} of {len(s.expected)} starts accepted; "
           f"{late} streams due at {late_due - due:+d}s created while it lagged; primary SIGKILLed {killed - detached:.1f}s later "
           f"with {at_kill} accepted")
    s.note(f"the Sentinels named the replica the primary {took:.1f}s after the kill; every worker's heartbeat reached it "
           f"{followed:.1f}s after the kill")
    s.wait_until(late_due + 0.5)
    s.wait_quiet(s.size(90, 180))
    repairs = [line for w in s.d.workers for line in w.log_lines()
               if line.get("msg") == "reconciler repaired the queue" and _log_time(line) >= killed]
    s.note(f"reconciler (RECONCILE_INTERVAL_SECONDS={s.d.settings['RECONCILE_INTERVAL_SECONDS']}, so only the run a failover "
           "starts can help) after the kill: "
           + ("; ".join(f"+{_log_time(line) - killed:.1f}s added {line.get('added')}" for line in repairs) or "no repair"))
    s.check(bool(repairs), "a reconciler run rebuilt the jobs lost with the primary")
    alive = sum(1 for w in s.d.workers if w.alive)
    s.check(alive == len(s.d.workers), f"every worker kept running ({alive}/{len(s.d.workers)})")


def scenario_demoted_primary(s):
    """17. The primary demoted under the workers mid-burst: the replica promoted (REPLICAOF NO ONE), the live old
    primary made its replica (REPLICAOF), then the Sentinels told (SENTINEL FAILOVER). Workers writing to the old
    primary get READONLY and must find the new one. Lost 0, duplicated 0."""
    sentinels = own_sentinel_set(s)
    s.start_workers(2)
    due = s.seed(s.size(300, 2000))
    s.wait_until(due + 0.5)
    before = len(s.accepted_keys())
    old, new = sentinels.primary_port, sentinels.replica_port
    sentinels.redis_on(new, "REPLICAOF", "NO", "ONE")
    sentinels.redis_on(old, "REPLICAOF", "127.0.0.1", new)
    demoted = time.time()
    # The Sentinels still name the old primary until told; meanwhile clients find it a replica (ROLE, READONLY).
    time.sleep(1)
    sentinels.redis_on(sentinels.sentinel_ports[0], "SENTINEL", "FAILOVER", sentinels.master)
    sentinels.wait_for_primary(new)
    named = time.time()
    followed = wait_workers_follow(s, demoted, 60)
    s.note(f"primary demoted {demoted - due:+.1f}s after the due second with {before} of {len(s.expected)} starts accepted; "
           f"SENTINEL FAILOVER 1s later; the Sentinels named the new primary {named - demoted:.1f}s"
           f" after the demotion; every worker's heartbeat reached it {followed:.1f}s after the demotion")
    s.wait_quiet(s.size(90, 180))
    lines, workers = failover_logs(s)
    s.note(f"{lines} worker log lines mention READONLY, from {workers} of {len(s.d.workers)} workers")
    s.check(lines > 0, "workers met READONLY replies")
    alive = sum(1 for w in s.d.workers if w.alive)
    s.check(alive == len(s.d.workers), f"every worker kept running ({alive}/{len(s.d.workers)})")


def scenario_device_model(s):
    """20. A randomized run replayed on a model of each phone (chaos_devices.py, device_model.py): reschedules, cancels,
    status changes, late guests, tokens and sessions around T-lead, a worker SIGKILLed every few seconds; every
    invariant 0 violations, duplicated ≤ starts in flight at the kills."""
    chaos_devices.run(s, kill_and_record)


SCENARIOS = [
    (1, "SIGKILL a random worker every 2 s during a burst", scenario_kill_workers,
     {"WORKER_CONCURRENCY": "4", "JOB_LEASE_SECONDS": "5"}, 200),
    (2, "Redis restart during a burst (AOF)", scenario_redis_restart, {"WORKER_CONCURRENCY": "8", "JOB_LEASE_SECONDS": "5"}, 60),
    (3, "Redis FLUSHALL an hour before the starts (reconcile)", scenario_redis_flush, {"RECONCILE_INTERVAL_SECONDS": "5"}, 30),
    (4, "PostgreSQL restart during a burst", scenario_postgres_restart, {"WORKER_CONCURRENCY": "8", "JOB_LEASE_SECONDS": "5"}, 60),
    (5, "FCM 503 for 20 s, then recovery", scenario_fcm_unavailable, {}, 30),
    (6, "FCM 429 with Retry-After: 5", scenario_fcm_quota, {}, 30),
    (7, "10% of tokens UNREGISTERED", scenario_unregistered, {}, 30),
    (8, "a worker whose clock runs 10 minutes fast", scenario_fast_clock, {}, 30),
    (9, "poison jobs and rows", scenario_poison, {}, 30),
    (10, "SIGTERM during a burst", scenario_sigterm, {"WORKER_CONCURRENCY": "8", "SHUTDOWN_GRACE_SECONDS": "10"}, 100),
    (11, "the backend holds FOR UPDATE on some streams for 40 s during a burst", scenario_held_rows, {}, 30),
    (12, "a wrong Firebase project during a burst (token guard)", scenario_wrong_project, {}, 30),
    (13, "pause starts for 30 s mid-burst, then resume", scenario_pause, {"WORKER_CONCURRENCY": "8"}, 50),
    (14, "PostgreSQL connections killed every 2 s during a burst", scenario_postgres_connections_killed,
     {"WORKER_CONCURRENCY": "4", "JOB_LEASE_SECONDS": "5"}, 200),
    (15, "SIGKILL one worker mid-burst, survivors take over", scenario_takeover, {"JOB_LEASE_SECONDS": "30"}, 200),
    (16, "Sentinel failover: the primary SIGKILLed mid-burst, a lagging replica promoted", scenario_sentinel_failover,
     {"WORKER_CONCURRENCY": "4", "JOB_LEASE_SECONDS": "5"}, 200),
    (17, "the primary demoted under the workers mid-burst (READONLY)", scenario_demoted_primary,
     {"WORKER_CONCURRENCY": "4", "JOB_LEASE_SECONDS": "5"}, 200),
    (18, "pause starts, Redis FLUSHALL, reconcile: nothing sent until resume", scenario_pause_redis_loss, {}, 30),
    (19, "SIGKILL a random worker every 2 s during a burst, Android countdown on", scenario_kill_workers_android,
     {"WORKER_CONCURRENCY": "4", "JOB_LEASE_SECONDS": "5", "ANDROID_COUNTDOWN": "on"}, 200),
    (20, "a randomized run on a model of each phone, workers SIGKILLed", scenario_device_model,
     {"START_LEAD_SECONDS": "20", "EXPIRE_AFTER_SECONDS": "6", "WORKER_CONCURRENCY": "8", "JOB_LEASE_SECONDS": "5",
      "ANDROID_COUNTDOWN": "on"}, 30),
]


def _log_time(line):
    try:
        return parse_iso_time(line.get("ts", ""))
    except ValueError:
        return 0.0


# MARK: - Running and reporting


def run_scenario(servers, entry, quick):
    number, title, body, settings, latency = entry
    scenario = Scenario(servers, number, title, quick, settings=settings, latency_ms=latency)
    try:
        live = body(scenario)
        return scenario.result(expected=live), scenario
    except HarnessError as error:
        scenario.check(False, f"harness: {error}")
        return scenario.result(), scenario
    finally:
        scenario.close()


def keep_logs(scenario):
    target = os.path.join("/tmp", f"countdown-chaos-{time.strftime('%Y%m%d-%H%M%S')}", f"scenario-{scenario.number}")
    shutil.copytree(scenario.deployment.directory, target, dirs_exist_ok=True)
    return target


def print_table(results, quick, total_seconds):
    out = sys.stdout
    out.write(f"\nscripts/chaos{' --quick' if quick else ''}: {len(results)} scenarios in {total_seconds:.0f}s\n\n")
    out.write("| # | scenario | expected | accepted | lost | duplicated | unexpected | duplicate bound | result | s |\n")
    out.write("|---|---|---|---|---|---|---|---|---|---|\n")
    for r in results:
        out.write(f"| {r['number']} | {r['title']} | {r['expected']} | {r['accepted']} | {r['lost']} | {r['duplicated']} | "
                  f"{r['unexpected']} | {r['duplicateBound']} | {'pass' if r['passed'] else 'FAIL'} | {r['seconds']} |\n")
    for r in results:
        out.write(f"\n{r['number']}. {r['title']}: {'pass' if r['passed'] else 'FAIL'}\n")
        for detail in r["details"]:
            out.write(f"     {detail}\n")
        for check in r["checks"]:
            out.write(f"   {'ok ' if check['passed'] else 'NOT'} {check['text']}\n")
    out.flush()


def main():
    parser = argparse.ArgumentParser(prog="scripts/chaos", description="Faults injected into the whole system, with exact loss and duplicate counts.")
    parser.add_argument("--quick", action="store_true", help="a small version of every scenario (about 7 minutes)")
    parser.add_argument("--only", help="scenario numbers to run, comma-separated")
    parser.add_argument("--skip", help="scenario numbers not to run, comma-separated")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--debug", action="store_true", help="use the debug build (as scripts/test built it)")
    parser.add_argument("--skip-build", action="store_true", help="use the existing build")
    arguments = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    wanted = {int(n) for n in arguments.only.split(",")} if arguments.only else None
    unwanted = {int(n) for n in arguments.skip.split(",")} if arguments.skip else set()
    servers = Servers()
    # Crash semantics as in production: a commit is durable once acknowledged (scripts/test's servers run with
    # synchronous_commit off, which loses the last commits when the server is killed). fsync stays off: the
    # machine itself does not crash here, only the server processes.
    servers.restart_postgres({"synchronous_commit": "on"})
    started = time.time()
    results = []
    for entry in SCENARIOS:
        if (wanted and entry[0] not in wanted) or entry[0] in unwanted:
            continue
        log(f"scenario {entry[0]}: {entry[1]}")
        result, scenario = run_scenario(servers, entry, arguments.quick)
        if not result["passed"]:
            result["logs"] = keep_logs(scenario)
            result["details"].append(f"logs kept in {result['logs']}")
        log(f"scenario {entry[0]}: {'pass' if result['passed'] else 'FAIL'} (lost {result['lost']}, duplicated {result['duplicated']}, "
            f"unexpected {result['unexpected']}, {result['seconds']}s)")
        results.append(result)
    print_table(results, arguments.quick, time.time() - started)
    if arguments.json:
        with open(arguments.json, "w") as handle:
            json.dump(results, handle, indent=2, ensure_ascii=False)
    sys.exit(0 if all(r["passed"] for r in results) else 1)


if __name__ == "__main__":
    main()
