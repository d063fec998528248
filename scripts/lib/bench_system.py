"""scripts/bench system: the whole system under a start burst and a reminder fan-out, with exact counts.

For each worker count (default 1, 2, 4) it starts that many real workers and runs start bursts: S streams
(default 10,000) whose T-60 falls in the same second, each with a creator and two guests holding 1-2 eligible
iOS devices plus ineligible ones. With the repeat worker count (default 2) it runs three bursts back to back
(memory must not grow) and then the reminder fan-out: R active reminders (default 100,000) on one popular stream.
The fake FCM answers every send after a fixed latency (default 30 ms).

With `--android-share F` the workers run with ANDROID_COUNTDOWN=on and that share of the eligible devices (of the
bursts and the giant stream) is Android with an FCM token instead of iOS: the same devices get a start, each on
its platform (SPEC 10.4), and the Android countdown's starts are counted with the iOS starts.

Timing: streams are inserted with a planned start a day away, the outbox relay queues their jobs, then one
UPDATE moves every planned start to (due second + START_LEAD_SECONDS); the due second is chosen after
measuring how fast the relay drains, so every start job is queued before it is due. Seeding and relaying
are reported separately from the burst.
"""

import argparse
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from countdown_system import (  # noqa: E402
    Deployment, HarnessError, PushTally, Servers, android_device_sql, children_of, compare, expected_starts, is_android_start,
    ledger_counts, percentile, seed_people_sql, seed_streams_sql, stop_process, wait_for)

MB = 1024.0
TARGET_START_SECONDS = 15
# 100,000 reminders within 12 s with every worker taking part; 1,000,000 (--reminders 1000000) within 2 minutes.
TARGET_REMINDER_SECONDS = 12
TARGET_MILLION_REMINDER_SECONDS = 120
# Portable figures: CPU per push sent, independent of the machine's load and of wall-clock noise.
# ... over the 10,000-stream burst: a smaller burst spreads the fixed costs (startup, polling) over too few pushes.
TARGET_COST_MIN_STREAMS = 10_000
TARGET_WORKER_MICROS_PER_PUSH = 100
TARGET_POSTGRES_MICROS_PER_PUSH = 50
TARGET_RSS_MB = 150
GROWTH_TOLERANCE = 0.10
# A bulk load leaves the planner without statistics until autovacuum catches up (the first burst then ran its
# per-stream queries 10x slower); a real database has them, so the seed ends with ANALYZE.
ANALYZE = "\nANALYZE users; ANALYZE devices; ANALYZE streams; ANALYZE stream_participants; ANALYZE stream_reminders;\n"


def parse_arguments():
    parser = argparse.ArgumentParser(prog="scripts/bench system", description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", type=int, default=10_000, help="streams per burst (default 10000)")
    parser.add_argument("--reminders", type=int, default=100_000, help="active reminders on the popular stream (default 100000; 0 skips)")
    parser.add_argument("--workers", default="1,2,4", help="worker counts to run, comma-separated (default 1,2,4)")
    parser.add_argument("--giant-guests", type=int, default=10_000,
                        help="guests (two eligible devices each) of the one giant stream (default 10000: 20,002 starts; 0 skips)")
    parser.add_argument("--repeat", type=int, default=3, help="back-to-back bursts with the repeat worker count (default 3)")
    parser.add_argument("--repeat-workers", type=int, default=2, help="worker count for repeated bursts and reminders (default 2)")
    parser.add_argument("--latency-ms", type=int, default=30, help="fake FCM answer latency (default 30)")
    parser.add_argument("--android-share", type=float, default=0.0, metavar="F",
                        help="share (0-1) of the eligible devices that are Android, with ANDROID_COUNTDOWN=on (default 0: "
                             "iOS only, the flag off)")
    parser.add_argument("--worker-env", action="append", default=[], metavar="NAME=VALUE", help="extra worker environment")
    parser.add_argument("--profile", action="store_true", help="pg_stat_statements: print the statements that dominate each burst")
    parser.add_argument("--perf", metavar="DIR",
                        help="sample the workers' CPU with `perf record -e cpu-clock` in each measured phase, print the "
                             "functions that dominate and keep the full reports in DIR (needs perf)")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--skip-build", action="store_true", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    arguments.worker_counts = [int(part) for part in arguments.workers.split(",") if part]
    if arguments.streams < 1 or any(count < 1 for count in arguments.worker_counts):
        parser.error("--streams and --workers must be positive")
    if not 0 <= arguments.android_share <= 1:
        parser.error("--android-share must be between 0 and 1")
    return arguments


def log(message):
    print(f"  {time.strftime('%H:%M:%S')} {message}", file=sys.stderr, flush=True)


class CpuSampler:
    """`perf record -e cpu-clock` attached to the workers for one measured phase; `stop()` returns the functions
    holding the most samples (self time, Swift names demangled), or None when perf is missing or failed."""

    def __init__(self, directory, name, pids):
        self.data = os.path.join(directory, f"perf-{name}.data")
        self.report = os.path.join(directory, f"perf-{name}.txt")
        self.log = open(os.path.join(directory, f"perf-{name}.log"), "w")
        self.process = subprocess.Popen(
            ["perf", "record", "-q", "-F", "499", "-e", "cpu-clock", "-g", "-o", self.data, "-p", ",".join(map(str, pids))],
            stdout=self.log, stderr=self.log)

    def stop(self, limit=25):
        stop_process(self.process, signal.SIGINT, 60)  # perf writes its data file on SIGINT
        self.log.close()
        with open(self.report, "w") as out:
            report = subprocess.run(["perf", "report", "-i", self.data, "--no-children", "--sort", "dso,symbol", "--stdio",
                                     "-g", "none", "--percent-limit", "0.3"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            demangler = shutil.which("swift-demangle") or shutil.which("swift")
            text = report.stdout
            if demangler:
                arguments = [demangler, "--simplified"] if demangler.endswith("demangle") else [demangler, "demangle", "--simplified"]
                text = subprocess.run(arguments, input=text, stdout=subprocess.PIPE).stdout
            out.write(text.decode(errors="replace"))
        rows = []
        with open(self.report) as handle:
            for line in handle:
                match = re.match(r"\s*([0-9.]+)%\s+(\S+)\s+\[[^]]+\]\s+(.*)", line)
                if match:
                    rows.append({"percent": float(match.group(1)), "dso": match.group(2), "symbol": match.group(3).strip()[:140]})
        return rows[:limit] if rows else None


class Bench:
    def __init__(self, arguments):
        self.arguments = arguments
        self.ledger_writes_before = None
        self.servers = Servers()
        if arguments.profile:
            self.servers.enable_statement_statistics()
        settings = dict(item.split("=", 1) for item in arguments.worker_env)
        self.android = arguments.android_share > 0
        if self.android:
            settings.setdefault("ANDROID_COUNTDOWN", "on")
        # Record lines are gathered for 5 ms (their receivedAt is still the second each message was accepted):
        # one write per message cost the fake, which shares the cores with what is measured, a tenth of its CPU.
        self.deployment = Deployment(self.servers, "bench", settings=settings, fake_record_flush_ms=5)
        if arguments.profile:
            self.deployment.sql("CREATE EXTENSION pg_stat_statements")
        self.deployment.fake.fault({"latencyMs": arguments.latency_ms})
        self.tally = PushTally(self.deployment.fake)
        self.relay_rows_per_second = None
        self.results = {"streams": arguments.streams, "reminders": arguments.reminders, "latencyMs": arguments.latency_ms,
                        "androidShare": arguments.android_share,
                        "cores": os.cpu_count(), "bursts": [], "reminderFanout": None, "workerExits": {}}
        # Text keys compare by bytes under the C collation and through strcoll under any other: PostgreSQL's CPU
        # per push depends on it (docs/capacity.md). COUNTDOWN_PG_LOCALE picks the throwaway cluster's locale.
        self.results["postgresCollation"] = self.deployment.scalar("SELECT datcollate FROM pg_database WHERE datname = current_database()")

    # Seeding

    def seed_people(self):
        started = time.time()
        self.deployment.sql(seed_people_sql("b", self.arguments.streams, android_share=self.arguments.android_share) + ANALYZE)
        elapsed = time.time() - started
        counts = self.deployment.sql("SELECT (SELECT count(*) FROM users), (SELECT count(*) FROM devices)", single_transaction=False)[0]
        self.results["seedPeople"] = {"seconds": round(elapsed, 2), "users": int(counts[0]), "devices": int(counts[1])}
        log(f"seeded {counts[0]} users and {counts[1]} devices in {elapsed:.1f}s")

    def queue_with_due_second(self, insert_sql, outbox_rows, update_sql, moved_rows):
        """Inserts rows planned far ahead, lets the relay drain, then moves them so their due second is T and
        lets the relay drain again. Returns (T, timings)."""
        deployment = self.deployment
        started = time.time()
        deployment.sql(insert_sql)
        inserted = time.time() - started
        drained = deployment.wait_outbox_drained(900)
        rate = outbox_rows / max(drained, 0.05)
        self.relay_rows_per_second = rate if self.relay_rows_per_second is None else min(rate, self.relay_rows_per_second)
        lead = max(6, math.ceil(moved_rows / self.relay_rows_per_second * 2) + 4)
        due = math.ceil(deployment.db_now()) + lead
        started = time.time()
        deployment.sql(update_sql.format(due=due))
        updated = time.time() - started
        requeued = deployment.wait_outbox_drained(900)
        queued_before_due = time.time() < due
        timings = {"insertSeconds": round(inserted, 2), "relaySeconds": round(drained, 2), "relayRowsPerSecond": round(rate),
                   "outboxRows": outbox_rows, "updateSeconds": round(updated, 2), "requeueSeconds": round(requeued, 2),
                   "queuedBeforeDue": queued_before_due, "leadSeconds": lead}
        return due, timings

    # Measurements

    def snapshot(self):
        workers = self.deployment.workers
        # The slower readings (HTTP, redis-cli) first, so the time and the CPU figures are read close together.
        slow = {"logOffsets": {worker.log_path: os.path.getsize(worker.log_path) for worker in workers},
                "pushes": push_outcomes(workers), "redisCommands": redis_commands(self.servers)}
        return {"at": time.time(), "pg": self.servers.postgres_cpu_seconds(), "redis": self.servers.redis_cpu_seconds(),
                "fake": self.deployment.fake.cpu_seconds(), "workers": [worker.cpu_seconds() for worker in workers],
                "switches": sum(worker.context_switches() for worker in workers), **slow}

    def usage(self, before, after):
        window = max(after["at"] - before["at"], 0.001)
        memory = [worker.memory_kb() or (0, 0) for worker in self.deployment.workers]
        return {
            "windowSeconds": round(window, 2),
            "workerCpuSeconds": [round(b - a, 2) for a, b in zip(before["workers"], after["workers"])],
            "workerRssMB": [round(rss / MB, 1) for rss, _ in memory],
            "workerPeakRssMB": [round(peak / MB, 1) for _, peak in memory],
            "postgresCpuSeconds": round(after["pg"] - before["pg"], 2),
            "redisCpuSeconds": round(after["redis"] - before["redis"], 2),
            "fakeFcmCpuSeconds": round(after["fake"] - before["fake"], 2),
            # Threads that ended in between took their counts with them: never below zero.
            "workerContextSwitches": max(0, after["switches"] - before["switches"]),
            "workerWarnings": worker_warnings(before["logOffsets"]),
            "redisCommandSeconds": command_seconds(before["redisCommands"], after["redisCommands"]),
            # Pushes other than sent (retries, timeouts, refusals): the usual reason for a long tail.
            "pushesNotSent": {key: int(count - before["pushes"].get(key, 0)) for key, count in after["pushes"].items()
                              if not key.startswith("accepted/") and count > before["pushes"].get(key, 0)},
        }

    def start_sampling(self, name):
        """Samples the workers (printed), the fake FCM and PostgreSQL's processes (their reports kept beside the
        workers', as `perf-<name>-fake.txt` and `perf-<name>-postgres.txt`; backends are sampled if they were
        connected when the phase began, which the workers' pools are)."""
        if not self.arguments.perf:
            return None
        os.makedirs(self.arguments.perf, exist_ok=True)
        postmaster = self.servers.postmaster_pid()
        postgres = [postmaster] + children_of(postmaster) if postmaster else []
        return (CpuSampler(self.arguments.perf, name, [worker.pid for worker in self.deployment.workers]),
                CpuSampler(self.arguments.perf, name + "-fake", [self.deployment.fake.process.pid]),
                CpuSampler(self.arguments.perf, name + "-postgres", postgres) if postgres else None)

    @staticmethod
    def stop_sampling(samplers):
        if not samplers:
            return None
        workers, fake, postgres = samplers
        fake.stop()
        if postgres:
            postgres.stop()
        return workers.stop()

    LEDGER_WRITES = """
        SELECT n_tup_ins, n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'countdown_start_ledger'
    """

    def reset_statement_statistics(self):
        if self.arguments.profile:
            self.deployment.sql("SELECT pg_stat_statements_reset()", single_transaction=False)
            self.ledger_writes_before = self.deployment.sql(self.LEDGER_WRITES, single_transaction=False)

    def ledger_writes(self):
        """Rows the start ledger gained and updated during the phase, and how many updates were HOT (no new index
        entry). Backends report their counts within a second or so of a transaction, so this waits two."""
        if not self.arguments.profile:
            return None
        time.sleep(2)
        after = self.deployment.sql(self.LEDGER_WRITES, single_transaction=False)
        before = self.ledger_writes_before or [[0, 0, 0]]
        if not after:
            return None
        inserted, updated, hot = (int(a) - int(b) for a, b in zip(after[0], before[0]))
        return {"inserted": inserted, "updated": updated, "hotUpdated": hot}

    def top_statements(self, limit=8):
        if not self.arguments.profile:
            return None
        rows = self.deployment.sql(f"""
            SELECT calls, round(total_exec_time::numeric, 0), round(mean_exec_time::numeric, 2), round(total_plan_time::numeric, 0),
                   left(regexp_replace(query, '\\s+', ' ', 'g'), 100)
            FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%'
            ORDER BY total_exec_time + total_plan_time DESC LIMIT {limit}
        """, single_transaction=False)
        return [{"calls": int(r[0]), "totalMs": float(r[1]), "meanMs": float(r[2]), "planMs": float(r[3]), "query": r[4]} for r in rows]

    # Phases

    def burst(self, workers, run):
        streams = self.arguments.streams
        prefix = f"w{workers}r{run}."
        log(f"burst {prefix}: seeding {streams} streams")
        due, timings = self.queue_with_due_second(
            seed_streams_sql("b", prefix, streams, "now() + interval '1 day'") + ANALYZE, streams * 4,
            f"UPDATE streams SET planned_start_at = to_timestamp({{due}} + {self.deployment.start_lead}) WHERE id LIKE '{prefix}%'",
            streams)
        expected = expected_starts(self.deployment, prefix, android=self.android)
        log(f"burst {prefix}: {len(expected)} starts due at {time.strftime('%H:%M:%S', time.localtime(due))} "
            f"(relay {timings['relaySeconds']}s for {timings['outboxRows']} rows)")
        self.reset_statement_statistics()
        wait_for(lambda: time.time() >= due - 0.5, 900, "the due second")
        load = os.getloadavg()[0]
        sampler = self.start_sampling(f"burst-{prefix.rstrip('.')}")
        before = self.snapshot()
        try:
            wait_for(lambda: self.tally.refresh().start_count(prefix) >= len(expected), 600, "every start push", every=0.25)
            complete = True
        except HarnessError as error:
            log(str(error))
            complete = False
        after = self.snapshot()
        samples = self.stop_sampling(sampler)
        times = self.tally.start_times(prefix)
        counts = compare(expected, self.tally.start_keys(prefix))
        wait_for(lambda: not self._open_ledger_rows(prefix), 120, "the start ledger to settle", every=0.5)
        ledger, _ = ledger_counts(self.deployment, prefix)
        lateness = [at - due for at in times]
        last = max(lateness) if lateness else None
        result = {
            "workers": workers, "run": run, "dueSecond": due, "complete": complete, "loadAverage": round(load, 1),
            "seeding": timings, **counts, "ledger": ledger, **android_counts(expected, self.tally.start_keys(prefix)),
            "dueToLastSeconds": round(last, 2) if last is not None else None,
            "pushesPerSecond": round(len(times) / last) if last else None,
            "latenessP50": round(percentile(lateness, 0.50), 2) if lateness else None,
            "latenessP99": round(percentile(lateness, 0.99), 2) if lateness else None,
            "usage": self.usage(before, after),
            "statements": self.top_statements(), "ledgerWrites": self.ledger_writes(), "workerSamples": samples,
        }
        self.results["bursts"].append(result)
        log(f"burst {prefix}: {counts['accepted']} accepted, last {result['dueToLastSeconds']}s after due, "
            f"{result['pushesPerSecond']}/s, lost {counts['lost']}, duplicated {counts['duplicated']}; "
            f"worker warnings: {warnings_line(result['usage'])}")
        return result

    def _reconciled(self):
        return any(line.get("msg") in ("reconciler found the queue consistent", "reconciler repaired the queue")
                   for worker in self.deployment.workers for line in worker.log_lines())

    def _open_ledger_rows(self, prefix):
        return int(self.deployment.scalar(
            f"SELECT count(*) FROM countdown_start_ledger WHERE stream_id LIKE '{prefix}%' AND status IN ('pending', 'sending')"))

    def reminder_fanout(self):
        count = self.arguments.reminders
        stream = "rm.popular"
        log(f"reminders: seeding {count} users, devices and active reminders")
        insert = f"""
            INSERT INTO users (id, display_name, locale)
            SELECT 'rmu' || i, 'Fan ' || i, CASE WHEN i % 3 = 0 THEN 'en' ELSE 'tr' END FROM generate_series(1, {count}) i;
            INSERT INTO devices (device_id, user_id, platform, fcm_token)
            SELECT 'rmd' || i, 'rmu' || i, CASE WHEN i % 2 = 0 THEN 'ios' ELSE 'android' END,
                   'fcm-rm-' || md5('rm' || i) || lpad(i::text, 8, '0')
            FROM generate_series(1, {count}) i;
            DELETE FROM countdown_outbox WHERE topic = 'device';
            INSERT INTO streams (id, title, planned_start_at) VALUES ('{stream}', 'Büyük final', now() + interval '1 day');
            INSERT INTO stream_participants (stream_id, user_id, role, position)
            VALUES ('{stream}', 'bu1_0', 'creator', 0), ('{stream}', 'bu1_1', 'guest', 1);
            INSERT INTO stream_reminders (stream_id, user_id) SELECT '{stream}', 'rmu' || i FROM generate_series(1, {count}) i;
        """ + ANALYZE
        reminder_lead = int(self.deployment.settings["REMINDER_LEAD_SECONDS"])
        due, timings = self.queue_with_due_second(
            insert, count + 3, f"UPDATE streams SET planned_start_at = to_timestamp({{due}} + {reminder_lead}) WHERE id = '{stream}'", 1)
        log(f"reminders: due at {time.strftime('%H:%M:%S', time.localtime(due))} (relay {timings['relaySeconds']}s for {count + 3} rows)")
        self.reset_statement_statistics()
        wait_for(lambda: time.time() >= due - 0.5, 900, "the reminder due second")
        load = os.getloadavg()[0]
        sampler = self.start_sampling("reminders")
        before = self.snapshot()

        def delivered():
            return self.tally.refresh().reminder_count(stream)
        try:
            wait_for(lambda: delivered() >= count, 900, "every reminder", every=0.25)
            complete = True
        except HarnessError as error:
            log(str(error))
            complete = False
        after = self.snapshot()
        samples = self.stop_sampling(sampler)
        times = [at for name, at in self.tally.reminders if name == stream]
        sent_rows = int(self.deployment.scalar(f"SELECT count(*) FROM stream_reminders WHERE stream_id = '{stream}' AND status = 'sent'"))
        last = max(times) - due if times else None
        result = {
            "reminders": count, "dueSecond": due, "complete": complete, "loadAverage": round(load, 1), "seeding": timings,
            "accepted": len(times), "remindersMarkedSent": sent_rows,
            "dueToLastSeconds": round(last, 2) if last is not None else None,
            "pushesPerSecond": round(len(times) / last) if last else None,
            "usage": self.usage(before, after), "statements": self.top_statements(), "workerSamples": samples,
        }
        self.results["reminderFanout"] = result
        log(f"reminders: {len(times)} accepted, last {result['dueToLastSeconds']}s after due; "
            f"worker warnings: {warnings_line(result['usage'])}")
        result["acceptedPerSecond"] = per_second(times, due)
        log("reminders accepted per second after due: " + " ".join(str(n) for n in result["acceptedPerSecond"]))

    def giant_stream(self):
        """One stream with a creator and N guests, two eligible iOS devices each: the start fan-out is paged
        (START_PAGE_SIZE) and its claims kept alive; every start within the target, none twice."""
        guests = self.arguments.giant_guests
        stream = "gs.giant"
        android = android_device_sql("'gsd' || i || '_' || j", self.arguments.android_share)
        log(f"giant stream: seeding a creator and {guests} guests with two devices each")
        insert = f"""
            INSERT INTO users (id, display_name, locale)
            SELECT 'gsu' || i, 'Guest ' || i, 'tr' FROM generate_series(0, {guests}) i;
            INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token)
            SELECT 'gsd' || i || '_' || j, 'gsu' || i, CASE WHEN {android} THEN 'android' ELSE 'ios' END,
                   'fcm-gs-' || md5('gs' || i || '_' || j) || lpad((i * 2 + j)::text, 8, '0'),
                   CASE WHEN {android} THEN NULL ELSE md5('pts-gs' || i || '_' || j) || md5('gs' || i) END
            FROM generate_series(0, {guests}) i, generate_series(1, 2) j;
            DELETE FROM countdown_outbox WHERE topic = 'device';
            INSERT INTO streams (id, title, planned_start_at) VALUES ('{stream}', 'Dev yayın', now() + interval '1 day');
            INSERT INTO stream_participants (stream_id, user_id, role, position)
            SELECT '{stream}', 'gsu' || i, CASE WHEN i = 0 THEN 'creator' ELSE 'guest' END, i FROM generate_series(0, {guests}) i;
        """ + ANALYZE
        due, timings = self.queue_with_due_second(
            insert, guests + 3, f"UPDATE streams SET planned_start_at = to_timestamp({{due}} + {self.deployment.start_lead}) WHERE id = '{stream}'", 1)
        expected = expected_starts(self.deployment, "gs.", android=self.android)
        log(f"giant stream: {len(expected)} starts due at {time.strftime('%H:%M:%S', time.localtime(due))}")
        wait_for(lambda: time.time() >= due - 0.5, 900, "the giant stream's due second")
        before = self.snapshot()
        try:
            wait_for(lambda: self.tally.refresh().start_count("gs.") >= len(expected), 600, "every giant-stream start", every=0.25)
            complete = True
        except HarnessError as error:
            log(str(error))
            complete = False
        after = self.snapshot()
        times = self.tally.start_times("gs.")
        counts = compare(expected, self.tally.start_keys("gs."))
        last = max(times) - due if times else None
        self.results["giantStream"] = {
            "guests": guests, "complete": complete, **counts, **android_counts(expected, self.tally.start_keys("gs.")), "seeding": timings,
            "dueToLastSeconds": round(last, 2) if last is not None else None, "usage": self.usage(before, after)}
        log(f"giant stream: {counts['accepted']} accepted, last {self.results['giantStream']['dueToLastSeconds']}s after due, "
            f"lost {counts['lost']}, duplicated {counts['duplicated']}; "
            f"worker warnings: {warnings_line(self.results['giantStream']['usage'])}")

    def run(self):
        self.seed_people()
        for workers in self.arguments.worker_counts:
            # The previous fleet's reconcile lock (held for one interval) would make this fleet skip its startup
            # reconcile; clear it, as if the interval had passed, so every phase starts alike.
            self.servers.redis("DEL", "{" + self.deployment.namespace + "}:reconcile:lock")
            started = time.time()
            for _ in range(workers):
                self.deployment.start_worker()
            wait_for(lambda: all(worker.metrics_address() for worker in self.deployment.workers), 60, "the workers to start")
            # Each start runs the reconciler over every stream that may need a job; measured, and not mixed into the bursts.
            wait_for(self._reconciled, 900, "the startup reconcile", every=0.5)
            streams = int(self.deployment.scalar("SELECT count(*) FROM streams"))
            self.results.setdefault("startupReconcile", []).append(
                {"workers": workers, "streams": streams, "seconds": round(time.time() - started, 1)})
            log(f"{workers} workers started; startup reconcile over {streams} streams took {time.time() - started:.1f}s")
            repeated = workers == self.arguments.repeat_workers
            for run in range(1, (self.arguments.repeat if repeated else 1) + 1):
                self.burst(workers, run)
            if repeated and self.arguments.reminders > 0:
                self.reminder_fanout()
            if repeated and self.arguments.giant_guests > 0:
                self.giant_stream()
            self.results["workerExits"][str(workers)] = self.deployment.stop_workers()

    def close(self):
        self.deployment.close()


# MARK: - Report


def android_counts(expected, accepted_keys):
    """How many of the expected and of the accepted starts are the Android countdown's."""
    return {"androidExpected": sum(1 for key in expected if is_android_start(key)),
            "androidAccepted": sum(1 for key in accepted_keys if is_android_start(key))}


def worker_warnings(offsets):
    """The workers' warn and error log lines written since `offsets` (log path → size then), counted by message:
    a slow tail of a phase usually has its reason here (retries, transient errors, a settle that failed)."""
    counts = {}
    for path, offset in offsets.items():
        with open(path, "rb") as log_file:
            log_file.seek(offset)
            for line in log_file:
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if isinstance(entry, dict) and entry.get("level") in ("warn", "error"):
                    key = f"{entry['level']}: {entry.get('msg', '?')}"
                    counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: -item[1]))


def redis_commands(servers):
    """Redis's `INFO commandstats`: {command: (calls, microseconds)}."""
    stats = {}
    for line in servers.redis("INFO", "commandstats").splitlines():
        match = re.match(r"cmdstat_([^:]+):calls=(\d+),usec=(\d+)", line)
        if match:
            stats[match.group(1)] = (int(match.group(2)), int(match.group(3)))
    return stats


def command_seconds(before, after, limit=6):
    """The commands that took most of Redis's time in between: {command: [calls, seconds]}."""
    spent = {name: (calls - before.get(name, (0, 0))[0], usec - before.get(name, (0, 0))[1]) for name, (calls, usec) in after.items()}
    top = sorted(((name, calls, usec) for name, (calls, usec) in spent.items() if usec > 0), key=lambda item: -item[2])[:limit]
    return {name: [calls, round(usec / 1e6, 2)] for name, calls, usec in top}


def push_outcomes(workers):
    """`countdown_pushes_total` summed over the workers, by "result/reason" (both kinds of push together)."""
    totals = {}
    for worker in workers:
        for key, value in worker.metrics().items():
            if not key.startswith("countdown_pushes_total{"):
                continue
            labels = dict(re.findall(r'(\w+)="([^"]*)"', key))
            name = f"{labels.get('result', '?')}/{labels.get('reason', '')}"
            totals[name] = totals.get(name, 0) + value
    return totals


def redis_line(usage):
    return ", ".join(f"{name} {calls} calls {seconds}s" for name, (calls, seconds) in (usage.get("redisCommandSeconds") or {}).items()) or "none"


def warnings_line(usage):
    items = list((usage.get("workerWarnings") or {}).items())
    items += [(f"pushes {name}", count) for name, count in (usage.get("pushesNotSent") or {}).items()]
    return ", ".join(f"{message} ×{count}" for message, count in items) or "none"


def per_second(times, due):
    """How many of `times` fall into each second after `due` (a slow start or a long tail shows at a glance)."""
    counts = [0] * (int(max(times) - due) + 1 if times and max(times) >= due else 0)
    for at in times:
        if at >= due:
            counts[int(at - due)] += 1
    return counts


def switches_per_push(usage, pushes):
    """Thread context switches of all workers per push: how often the workers' threads slept and woke."""
    return round(usage.get("workerContextSwitches", 0) / pushes, 2) if pushes else None


def micros_per_push(usage, pushes):
    """(worker µs, PostgreSQL µs) of CPU per push over a run, or (None, None) without pushes."""
    if not pushes:
        return None, None
    return (round(sum(usage["workerCpuSeconds"]) * 1e6 / pushes), round(usage["postgresCpuSeconds"] * 1e6 / pushes))


def fake_micros_per_push(usage, pushes):
    """The fake FCM's CPU per push: the machine-speed reference. The fake's code stays the same from run to run and
    does the same kind of work (a Swift HTTP server, loopback TCP), so when the machine runs slower (other tenants
    of the host, its clock) the fake's figure rises with the worker's and PostgreSQL's."""
    return round(usage["fakeFcmCpuSeconds"] * 1e6 / pushes) if pushes and usage.get("fakeFcmCpuSeconds") else None


def relative_to_fake(usage, pushes):
    """(worker, PostgreSQL) CPU per push divided by the fake FCM's: figures that runs at different machine speeds can
    compare, or (None, None)."""
    fake = fake_micros_per_push(usage, pushes)
    worker, postgres = micros_per_push(usage, pushes)
    if not fake or worker is None:
        return None, None
    return round(worker / fake, 2), round(postgres / fake, 2)


def verdicts(results, arguments):
    """(name, passed, detail) for each target of the issue; passed is None for a target this run cannot judge."""
    checks = []
    bursts = results["bursts"]
    target = [b for b in bursts if b["workers"] == arguments.repeat_workers]
    if target:
        worst = max((b["dueToLastSeconds"] or float("inf")) for b in target)
        clean = all(b["lost"] == 0 and b["unexpected"] == 0 and b["complete"] for b in target)
        checks.append((f"{arguments.streams} streams' starts within {TARGET_START_SECONDS}s with {arguments.repeat_workers} workers",
                       worst <= TARGET_START_SECONDS and clean, f"worst {worst}s, lost {sum(b['lost'] for b in target)}"))
        costs = [micros_per_push(b["usage"], b["accepted"]) for b in target]
        worker_cost = max((c[0] for c in costs if c[0] is not None), default=None)
        postgres_cost = max((c[1] for c in costs if c[1] is not None), default=None)
        if worker_cost is not None and arguments.streams < TARGET_COST_MIN_STREAMS:
            checks.append((f"CPU per push (judged for bursts of at least {TARGET_COST_MIN_STREAMS} streams)", None,
                           f"worker {worker_cost} µs, PostgreSQL {postgres_cost} µs"))
        elif worker_cost is not None:
            fakes = [fake_micros_per_push(b["usage"], b["accepted"]) for b in target]
            speed = f" (the fake FCM's CPU per push, the machine-speed reference: {'/'.join(str(f) for f in fakes)} µs)"
            checks.append((f"worker CPU <= {TARGET_WORKER_MICROS_PER_PUSH} µs per push", worker_cost <= TARGET_WORKER_MICROS_PER_PUSH,
                           f"worst run {worker_cost} µs" + speed))
            checks.append((f"PostgreSQL CPU <= {TARGET_POSTGRES_MICROS_PER_PUSH} µs per push",
                           postgres_cost <= TARGET_POSTGRES_MICROS_PER_PUSH, f"worst run {postgres_cost} µs" + speed))
    fanout = results.get("reminderFanout")
    if fanout:
        seconds = fanout["dueToLastSeconds"] or float("inf")
        limit = TARGET_MILLION_REMINDER_SECONDS if fanout["reminders"] >= 1_000_000 else TARGET_REMINDER_SECONDS
        checks.append((f"{fanout['reminders']} reminders within {limit}s",
                       seconds <= limit and fanout["complete"], f"{seconds}s"))
        cpu = fanout["usage"]["workerCpuSeconds"]
        # Every worker took part: none did less than a fifth of an equal share of the work.
        shared = len(cpu) > 1 and min(cpu) >= sum(cpu) / len(cpu) / 5
        checks.append(("every worker takes part in the reminder fan-out", shared or len(cpu) == 1,
                       "worker CPU " + "+".join(str(v) for v in cpu) + " s"))
    giant = results.get("giantStream")
    if giant:
        seconds = giant["dueToLastSeconds"] or float("inf")
        checks.append((f"one stream with {giant['guests'] * 2 + 2} eligible devices within {TARGET_START_SECONDS}s, none twice",
                       seconds <= TARGET_START_SECONDS and giant["complete"] and giant["duplicated"] == 0 and giant["lost"] == 0,
                       f"{seconds}s, lost {giant['lost']}, duplicated {giant['duplicated']}"))
    peaks = [peak for b in bursts for peak in b["usage"]["workerPeakRssMB"]]
    if fanout:
        peaks += fanout["usage"]["workerPeakRssMB"]
    if peaks:
        checks.append((f"worker RSS <= {TARGET_RSS_MB} MB", max(peaks) <= TARGET_RSS_MB, f"peak {max(peaks)} MB"))
    if len(target) >= 2:
        first = max(target[0]["usage"]["workerRssMB"])
        last = max(target[-1]["usage"]["workerRssMB"])
        checks.append((f"no growth across {len(target)} back-to-back runs", last <= first * (1 + GROWTH_TOLERANCE),
                       " -> ".join(f"{max(b['usage']['workerRssMB'])}" for b in target) + " MB"))
    exits = [code for codes in results["workerExits"].values() for code in codes]
    checks.append(("workers exit 0 on SIGTERM", all(code == 0 for code in exits), f"exit codes {exits}"))
    return checks


def scaling(results):
    by_workers = {}
    for burst in results["bursts"]:
        by_workers.setdefault(burst["workers"], burst)
    base = by_workers.get(1)
    if not base or not base["pushesPerSecond"]:
        return {}
    return {workers: round(burst["pushesPerSecond"] / base["pushesPerSecond"], 2)
            for workers, burst in sorted(by_workers.items()) if burst["pushesPerSecond"]}


def print_report(results, arguments):
    out = sys.stdout
    people = results.get("seedPeople", {})
    out.write(f"\nscripts/bench system: {arguments.streams} streams per burst, fake FCM latency {arguments.latency_ms} ms, "
              f"{results['cores']} cores, PostgreSQL collation {results.get('postgresCollation')}\n")
    if arguments.android_share > 0:
        out.write(f"Android share {arguments.android_share:g} of the eligible devices (ANDROID_COUNTDOWN=on): Android countdown "
                  "starts accepted/expected per burst: "
                  + ", ".join(f"w{b['workers']}r{b['run']} {b['androidAccepted']}/{b['androidExpected']} of {b['accepted']}"
                              for b in results["bursts"]) + "\n")
    out.write(f"seeding people: {people.get('users')} users, {people.get('devices')} devices in {people.get('seconds')}s\n")
    for entry in results.get("startupReconcile", []):
        out.write(f"workers started ({entry['workers']}): startup reconcile over {entry['streams']} streams took {entry['seconds']}s\n")
    out.write("\n")
    header = ("| workers | run | load | seed s | relay s (rows/s) | starts | due→last s | pushes/s | lateness p50/p99 s "
              "| lost/dup/unexp | worker RSS MB | worker CPU s | PG CPU s | Redis CPU s | fake CPU s | worker µs/push | PG µs/push | worker switches/push |")
    out.write(header + "\n")
    out.write("|" + "---|" * (header.count("|") - 1) + "\n")
    for b in results["bursts"]:
        usage, seed = b["usage"], b["seeding"]
        out.write(
            f"| {b['workers']} | {b['run']} | {b['loadAverage']} | {seed['insertSeconds']} | {seed['relaySeconds']} ({seed['relayRowsPerSecond']}) "
            f"| {b['accepted']}/{b['expected']} | {b['dueToLastSeconds']} | {b['pushesPerSecond']} | {b['latenessP50']} / {b['latenessP99']} "
            f"| {b['lost']}/{b['duplicated']}/{b['unexpected']} | {'+'.join(str(v) for v in usage['workerRssMB'])} "
            f"| {'+'.join(str(v) for v in usage['workerCpuSeconds'])} | {usage['postgresCpuSeconds']} | {usage['redisCpuSeconds']} "
            f"| {usage['fakeFcmCpuSeconds']} | {micros_per_push(usage, b['accepted'])[0]} | {micros_per_push(usage, b['accepted'])[1]} "
            f"| {switches_per_push(usage, b['accepted'])} |\n")
    references = []
    for b in results["bursts"]:
        fake = fake_micros_per_push(b["usage"], b["accepted"])
        worker, postgres = relative_to_fake(b["usage"], b["accepted"])
        if fake:
            references.append(f"w{b['workers']}r{b['run']} {fake} µs (worker ×{worker}, PostgreSQL ×{postgres})")
    if references:
        out.write("\nmachine-speed reference, the fake FCM's CPU per push (the same code in every run; the worker's and "
                  "PostgreSQL's CPU per push as multiples of it compare across runs at different machine speeds): "
                  + "; ".join(references) + "\n")
    warned = [(f"burst w{b['workers']}r{b['run']}", b["usage"]) for b in results["bursts"]]
    warned += [(title, results[key]["usage"]) for key, title in (("reminderFanout", "reminder fan-out"), ("giantStream", "giant stream"))
               if results.get(key)]
    warned = [(title, usage) for title, usage in warned if warnings_line(usage) != "none"]
    if warned:
        out.write("\nworker warnings and errors by phase: " + "; ".join(f"{title}: {warnings_line(usage)}" for title, usage in warned) + "\n")
    ratios = scaling(results)
    if ratios:
        out.write("\nscaling (pushes/s relative to 1 worker): " + ", ".join(f"{w} workers ×{r}" for w, r in ratios.items()) + "\n")
    fanout = results.get("reminderFanout")
    if fanout:
        usage, seed = fanout["usage"], fanout["seeding"]
        out.write(
            f"\nreminder fan-out: {fanout['accepted']}/{fanout['reminders']} accepted, {fanout['remindersMarkedSent']} marked sent, "
            f"due→last {fanout['dueToLastSeconds']}s ({fanout['pushesPerSecond']}/s), load {fanout['loadAverage']}; "
            f"seeding {seed['insertSeconds']}s, relay {seed['relaySeconds']}s ({seed['relayRowsPerSecond']} rows/s); "
            f"worker RSS {'+'.join(str(v) for v in usage['workerRssMB'])} MB, worker CPU {'+'.join(str(v) for v in usage['workerCpuSeconds'])}s, "
            f"PG CPU {usage['postgresCpuSeconds']}s, Redis CPU {usage['redisCpuSeconds']}s; per push: worker "
            f"{micros_per_push(usage, fanout['accepted'])[0]} µs, PG {micros_per_push(usage, fanout['accepted'])[1]} µs, "
            f"worker switches {switches_per_push(usage, fanout['accepted'])}, fake FCM CPU {usage['fakeFcmCpuSeconds']}s\n"
            f"accepted per second after due: {' '.join(str(n) for n in fanout.get('acceptedPerSecond', []))}\n"
            f"Redis time by command: {redis_line(usage)}\n")
    giant = results.get("giantStream")
    if giant:
        usage = giant["usage"]
        out.write(f"\ngiant stream: {giant['accepted']}/{giant['expected']} starts of one stream ({giant['androidAccepted']} Android), "
                  f"due→last {giant['dueToLastSeconds']}s, "
                  f"lost {giant['lost']}, duplicated {giant['duplicated']}; worker CPU {'+'.join(str(v) for v in usage['workerCpuSeconds'])}s, "
                  f"PG CPU {usage['postgresCpuSeconds']}s\n")
    if arguments.profile:
        for b in results["bursts"][:1] + ([fanout] if fanout else []):
            title = "reminder fan-out" if b is fanout else f"burst w{b['workers']}r{b['run']}"
            out.write(f"\nstatements by total time ({title}):\n")
            for s in b["statements"] or []:
                out.write(f"  {s['totalMs']:>7.0f} ms exec {s['planMs']:>6.0f} ms plan {s['calls']:>6} calls {s['meanMs']:>5.2f} ms  {s['query']}\n")
            writes = b.get("ledgerWrites")
            if writes:
                share = f"{100 * writes['hotUpdated'] / writes['updated']:.0f} %" if writes["updated"] else "-"
                out.write(f"  start ledger: {writes['inserted']} rows inserted, {writes['updated']} updated, {share} of the updates HOT\n")
    if arguments.perf:
        for b in results["bursts"][:1] + ([fanout] if fanout else []):
            title = "reminder fan-out" if b is fanout else f"burst w{b['workers']}r{b['run']}"
            out.write(f"\nworker CPU samples by function, self time ({title}; full report in {arguments.perf}):\n")
            if not b.get("workerSamples"):
                out.write("  (no samples: is perf installed and allowed to attach?)\n")
            for row in b.get("workerSamples") or []:
                out.write(f"  {row['percent']:>5.1f}%  {row['dso']:<28.28} {row['symbol']}\n")
    out.write("\ntargets:\n")
    for name, passed, detail in verdicts(results, arguments):
        out.write(f"  {'n/a ' if passed is None else 'PASS' if passed else 'MISS'}  {name}: {detail}\n")
    out.flush()


def main():
    arguments = parse_arguments()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    bench = Bench(arguments)
    try:
        bench.run()
    finally:
        bench.close()
    print_report(bench.results, arguments)
    if arguments.json:
        with open(arguments.json, "w") as handle:
            json.dump(bench.results, handle, indent=2)
    # Missed targets are findings (printed as MISS); losing or never finishing work is a failure.
    incomplete = any(not b["complete"] or b["lost"] for b in bench.results["bursts"])
    fanout = bench.results.get("reminderFanout")
    incomplete = incomplete or bool(fanout and not fanout["complete"])
    sys.exit(1 if incomplete else 0)


if __name__ == "__main__":
    main()
