"""scripts/chaos scenario 20: a randomized run replayed on a model of each phone (device_model.py).

Streams with creators and guests (iOS and Android devices, eligible and not), operations at random times around
T-lead (reschedules later and earlier, some across the 15-minute priority rule and a few past an activity's 8-hour
life, cancels, ready and started, late guests, late push-to-start and FCM tokens, late sessions) and a worker
SIGKILLed every few seconds (restarted). The harness plays the app: after a push-to-start is accepted it registers the
activity's runtime token as a session 0.2-6 s later (some much later), with the SQL the API's session handler writes.
Once everything has settled, every accepted push is on the model and the invariants are judged against PostgreSQL.

Seeded: the seed is printed; CHAOS_DEVICE_SEED=<seed> repeats a run's choices (timings still vary).
"""

import hashlib
import os
import random
import time

from countdown_system import HarnessError
from device_model import INVARIANTS, DeviceModel

NINE_HOURS = 9 * 3600


def _token(*parts):
    return hashlib.md5("-".join(str(p) for p in parts).encode()).hexdigest()


def _q(text):
    return "'" + str(text).replace("'", "''") + "'"


class Fleet:
    """The people, devices and streams of one run, what made each device eligible when, and the SQL writing them."""

    KINDS = ["ios", "ios", "ios", "android", "android", "ios_no_pts", "ios_no_fcm", "android_no_fcm", "web"]

    def __init__(self, rng, prefix, streams):
        self.rng = rng
        self.prefix = prefix
        self.users = {}  # user -> preference on
        self.devices = {}  # device -> dict(user, platform, fcm, pts)
        self.participants = {}  # stream -> {user: added_at}
        self.planned = {}
        self.token_since = {}  # device -> moment its last missing token arrived (0: had both from the start)
        count = 0
        for i in range(1, streams + 1):
            stream = f"{prefix}{i}"
            self.participants[stream] = {}
            for k in range(1 + rng.randint(0, 2)):
                count += 1
                self.participants[stream][self._user(f"{prefix}u{count}")] = 0.0
        # Bystanders: devices of users in no stream (some later become late guests).
        self.spare = [self._user(f"{prefix}x{n}") for n in range(max(3, streams // 3))]

    def _user(self, user):
        self.users[user] = self.rng.random() > 0.1
        for j in range(1 + (self.rng.random() < 0.4)):
            kind = self.rng.choice(self.KINDS)
            device = f"{user}d{j}"
            platform = "web" if kind == "web" else kind.split("_")[0]
            fcm = None if kind.endswith("no_fcm") else "fcm-" + _token("fcm", device)
            pts = _token("pts", device) if platform == "ios" and kind != "ios_no_pts" else None
            self.devices[device] = {"user": user, "platform": platform, "fcm": fcm, "pts": pts}
            self.token_since[device] = 0.0
        return user

    def seed_sql(self, planned_at):
        rows = []
        for user, on in self.users.items():
            rows.append(f"INSERT INTO users (id, display_name, locale) VALUES ({_q(user)}, {_q('User ' + user)}, 'tr');")
            if not on:
                rows.append(f"INSERT INTO notification_preferences (user_id, category, enabled) VALUES ({_q(user)}, 'live_stream', false);")
        for device, d in self.devices.items():
            rows.append("INSERT INTO devices (device_id, user_id, platform, fcm_token, push_to_start_token) VALUES "
                        f"({_q(device)}, {_q(d['user'])}, {_q(d['platform'])}, {_sql_or_null(d['fcm'])}, {_sql_or_null(d['pts'])});")
        rows.append("DELETE FROM countdown_outbox WHERE topic = 'device';")
        for stream, people in self.participants.items():
            self.planned[stream] = planned_at[stream]
            rows.append(f"INSERT INTO streams (id, title, planned_start_at) VALUES ({_q(stream)}, {_q('Yayın ' + stream)}, "
                        f"to_timestamp({planned_at[stream]}));")
            for position, user in enumerate(people):
                role = "creator" if position == 0 else "guest"
                rows.append(f"INSERT INTO stream_participants (stream_id, user_id, role, position) VALUES "
                            f"({_q(stream)}, {_q(user)}, '{role}', {position});")
        return "\n".join(rows)

    def eligible(self, device):
        d = self.devices[device]
        if not self.users[d["user"]] or not d["fcm"]:
            return False
        return (d["platform"] == "ios" and bool(d["pts"])) or d["platform"] == "android"

    def eligible_since(self, device, stream):
        d = self.devices.get(device)
        if d is None or not self.eligible(device):
            return None
        added = self.participants.get(stream, {}).get(d["user"])
        if added is None:
            return None
        return max(added, self.token_since[device])


def _sql_or_null(value):
    return "NULL" if value is None else _q(value)


class App:
    """Plays the app on every iOS phone: registers a started activity's runtime token as a session."""

    def __init__(self, s, fleet, model, rng):
        self.s, self.fleet, self.model, self.rng = s, fleet, model, rng
        self.pending = []  # (moment, activity, token)
        self.registered = 0
        self.late = 0

    def opened(self, activity):
        late = self.rng.random() < 0.1
        delay = self.rng.uniform(8, 15) if late else self.rng.uniform(0.2, 6)
        self.late += late
        token = _token("runtime", activity.device, activity.stream, activity.generation, activity.opened_at)
        self.pending.append((time.time() + delay, activity, token))

    def tick(self):
        due = [p for p in self.pending if p[0] <= time.time()]
        if not due:
            return
        self.pending = [p for p in self.pending if p[0] > time.time()]
        statements = []
        for _, activity, token in due:
            user = self.fleet.devices[activity.device]["user"]
            # As PostgresAPIStore.registerSession writes it (SQL.upsertSession).
            statements.append(f"""
                INSERT INTO live_activity_sessions AS s (stream_id, device_id, user_id, live_activity_token, activity_id)
                VALUES ({_q(activity.stream)}, {_q(activity.device)}, {_q(user)}, {_q(token)}, NULL)
                ON CONFLICT (stream_id, device_id) DO UPDATE SET
                    user_id = EXCLUDED.user_id, live_activity_token = EXCLUDED.live_activity_token, activity_id = EXCLUDED.activity_id
                WHERE (s.user_id, s.live_activity_token, s.activity_id) IS DISTINCT FROM
                      (EXCLUDED.user_id, EXCLUDED.live_activity_token, EXCLUDED.activity_id);""")
            self.model.attach(activity, token)
            self.registered += 1
        self.s.d.sql("\n".join(statements))


class RecordFollower:
    """Reads the fake FCM's record file from where it last stopped (independent of the scenario's PushTally)."""

    def __init__(self, path):
        self.path, self.offset, self.partial = path, 0, b""

    def new(self):
        import json
        with open(self.path, "rb") as handle:
            handle.seek(self.offset)
            chunk = handle.read()
        self.offset += len(chunk)
        lines = (self.partial + chunk).split(b"\n")
        self.partial = lines.pop()
        return [json.loads(line) for line in lines if line]


def _operations(s, fleet, rng, t0, window, opened_at):
    """(moment, description, function) for the run's operations, in time order."""
    ops = []
    streams = list(fleet.participants)
    # Every kind at least once (a roll inside its band), then at random.
    forced = [0.1, 0.2, 0.3, 0.38, 0.41, 0.5, 0.6, 0.65, 0.9]
    rng.shuffle(forced)
    for index, stream in enumerate(streams):
        at = t0 + rng.uniform(1, window)
        roll = forced[index] if index < len(forced) else rng.random()
        if 0.37 <= roll < 0.42:
            # After the activities started and their sessions registered: they outlive their 8 hours and are dismissed.
            at = max(at, opened_at[stream] + rng.uniform(6, 9))
        if roll < 0.15:
            ops.append((at, "reschedule later", lambda st=stream: ("later", st, rng.uniform(5, 30))))
        elif roll < 0.27:
            ops.append((at, "reschedule earlier", lambda st=stream: ("earlier", st, rng.uniform(2, 8))))
        elif roll < 0.37:
            ops.append((at, "reschedule past 15 minutes", lambda st=stream: ("set", st, 20 * 60)))
            ops.append((at + rng.uniform(2, 5), "reschedule back inside 15 minutes", lambda st=stream: ("set", st, rng.uniform(12, 25))))
        elif roll < 0.40:
            ops.append((at, "reschedule by 9 hours", lambda st=stream: ("later", st, NINE_HOURS)))
        elif roll < 0.42:
            ops.append((at, "reschedule by 9 hours", lambda st=stream: ("later", st, NINE_HOURS)))
            ops.append((at + rng.uniform(3, 6), "reschedule back from 9 hours", lambda st=stream: ("set", st, rng.uniform(12, 25))))
        elif roll < 0.54:
            ops.append((at, "cancel", lambda st=stream: ("status", st, "cancelled")))
        elif roll < 0.64:
            ops.append((at, "ready", lambda st=stream: ("status", st, "ready")))
            ops.append((at + rng.uniform(0.5, 4), "started", lambda st=stream: ("status", st, "started")))
        elif roll < 0.70:
            ops.append((at, "started", lambda st=stream: ("status", st, "started")))
        # else: left alone (expires, or stays scheduled)
    spare = list(fleet.spare)
    rng.shuffle(spare)
    for user in spare[:max(2, len(spare) // 2)]:
        ops.append((t0 + rng.uniform(1, window), "late guest", lambda u=user: ("guest", rng.choice(streams), u)))
    for device, d in fleet.devices.items():
        if d["platform"] == "ios" and d["pts"] is None and rng.random() < 0.7:
            ops.append((t0 + rng.uniform(1, window), "late push-to-start token", lambda dv=device: ("pts", dv, None)))
        if d["platform"] in ("ios", "android") and d["fcm"] is None and rng.random() < 0.7:
            ops.append((t0 + rng.uniform(1, window), "late FCM token", lambda dv=device: ("fcm", dv, None)))
    ops.sort(key=lambda op: op[0])
    return ops


def _apply(s, fleet, model, action):
    """Writes one operation as the backend would; notes when it could first have had an effect."""
    kind, subject, value = action
    began = time.time()
    if kind in ("later", "earlier", "set"):
        now = s.d.db_now()
        if kind == "set":
            planned = now + value
        else:
            planned = fleet.planned[subject] + (value if kind == "later" else -value)
            planned = max(planned, now + 1)
        planned = round(planned)
        s.d.sql(f"UPDATE streams SET planned_start_at = to_timestamp({planned}) WHERE id = {_q(subject)} AND status = 'scheduled'")
        status = s.d.scalar(f"SELECT status FROM streams WHERE id = {_q(subject)}")
        if status == "scheduled":
            fleet.planned[subject] = planned
    elif kind == "status":
        s.d.sql(f"UPDATE streams SET status = {_q(value)} WHERE id = {_q(subject)} AND status IN ('scheduled', 'ready')")
    elif kind == "guest":
        if value in fleet.participants[subject]:
            return
        fleet.participants[subject][value] = began
        position = len(fleet.participants[subject])
        s.d.sql(f"INSERT INTO stream_participants (stream_id, user_id, role, position) VALUES ({_q(subject)}, {_q(value)}, 'guest', {position})")
    elif kind == "pts":
        token = _token("pts-late", subject)
        fleet.devices[subject]["pts"] = token
        fleet.token_since[subject] = began
        model.push_to_start_token(subject, token)
        s.d.sql(f"UPDATE devices SET push_to_start_token = {_q(token)} WHERE device_id = {_q(subject)}")
    elif kind == "fcm":
        token = "fcm-" + _token("fcm-late", subject)
        fleet.devices[subject]["fcm"] = token
        fleet.token_since[subject] = began
        model.fcm_token(subject, token)
        s.d.sql(f"UPDATE devices SET fcm_token = {_q(token)} WHERE device_id = {_q(subject)}")


def _soon_due(s, seconds):
    """Jobs due within `seconds` (by the Redis clock) and jobs leased."""
    script = """
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        return {redis.call('ZCOUNT', KEYS[1], '-inf', now + tonumber(ARGV[1])), redis.call('ZCARD', KEYS[2])}
    """
    due, leased = (int(v) for v in s.d.redis("EVAL", script, "2", s.d.queue_key("due"), s.d.queue_key("leased"),
                                              str(int(seconds * 1000))).split())
    return due + leased


def run(s, kill_and_record):
    """The scenario body (see the module's doc); `kill_and_record` is scripts/chaos' SIGKILL helper."""
    seed = int(os.environ.get("CHAOS_DEVICE_SEED") or random.SystemRandom().randrange(1, 10**9))
    rng = random.Random(seed)
    s.note(f"seed {seed} (CHAOS_DEVICE_SEED={seed} repeats the run's choices)")
    lead = s.d.start_lead
    streams = s.size(20, 120)
    window = s.size(20, 40)
    fleet = Fleet(rng, s.prefix, streams)
    model = DeviceModel(lead)
    for device, d in fleet.devices.items():
        model.device(device, d["platform"])
        if d["pts"]:
            model.push_to_start_token(device, d["pts"])
        if d["fcm"]:
            model.fcm_token(device, d["fcm"])
    app = App(s, fleet, model, rng)
    follower = RecordFollower(s.fake.record_path)
    s.start_workers(3)
    t0 = time.time()
    db_t0 = s.d.db_now()
    planned = {stream: round(db_t0 + lead + rng.uniform(3, window - 4)) for stream in fleet.participants}
    s.d.sql(fleet.seed_sql(planned))
    ops = _operations(s, fleet, rng, t0, window, {st: t0 + p - lead - db_t0 for st, p in planned.items()})
    s.note(f"{streams} streams, {len(fleet.users)} users, {len(fleet.devices)} devices "
           f"({sum(1 for d in fleet.devices.values() if d['platform'] == 'android')} Android), "
           f"{len(ops)} operations over {window}s around T-lead (START_LEAD_SECONDS={lead})")
    kills = []
    next_kill = t0 + 3
    done_ops = []
    last_record, deadline = time.time(), t0 + window + s.size(60, 120)

    def poll():
        nonlocal last_record
        records = follower.new()
        if records:
            last_record = time.time()
        for record in records:
            opened = model.apply(record)
            if opened is not None:
                app.opened(opened)
        app.tick()

    while time.time() < deadline:
        poll()
        while ops and ops[0][0] <= time.time():
            _, what, make = ops.pop(0)
            _apply(s, fleet, model, make())
            done_ops.append(what)
        if time.time() >= next_kill and time.time() < t0 + window + 2:
            victim = rng.choice(s.d.workers)
            kills.append((time.time(), kill_and_record(s, victim)))
            s.d.retire(victim)
            s.d.start_worker()
            next_kill = time.time() + rng.uniform(2.5, 5)
        if (not ops and not app.pending and time.time() > t0 + window + 2 and time.time() - last_record >= 2
                and s.d.outbox_backlog() == 0 and _soon_due(s, 3) == 0):
            break
        time.sleep(0.1)
    else:
        s.check(False, f"settled within {deadline - t0:.0f}s of the first operation")
    poll()
    settled = time.time()
    rows = s.d.sql(f"SELECT id, status, extract(epoch FROM planned_start_at)::bigint FROM streams WHERE id LIKE '{s.prefix}%'",
                   single_transaction=False)
    final = {row[0]: (row[1], int(row[2])) for row in rows}
    violations = model.check(final, fleet.eligible_since, settled)
    lost = model.lost(final, fleet.eligible_since, settled)
    # Duplicates against the starts in flight at the kills.
    in_flight = set()
    for _, keys in kills:
        in_flight |= keys
    duplicated = len(violations[3])
    outside = [key for key in model.duplicates if key not in in_flight]
    s.duplicate_bound = sum(len(keys) for _, keys in kills)
    s.duplicate_bound_text = f"≤ {s.duplicate_bound} in flight"
    statuses = {}
    for status, _ in final.values():
        statuses[status] = statuses.get(status, 0) + 1
    counted = {op: done_ops.count(op) for op in sorted(set(done_ops))}
    s.note("operations: " + ", ".join(f"{op} {n}" for op, n in counted.items()))
    s.note("streams at the end: " + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())))
    s.note(f"{len(kills)} workers SIGKILLed and restarted: {s.duplicate_bound} starts in flight at the kills, {duplicated} duplicated "
           f"({len(outside)} outside those in flight)")
    activities = sum(len(a) for a in model.activities.values())
    s.note(f"replayed {sum(model.counts[k] for k in model.counts if k.startswith(('ios_', 'android_')))} pushes: "
           + ", ".join(f"{k} {v}" for k, v in sorted(model.counts.items()))
           + f"; {activities} activities/countdowns, {model.live_count()} live at the end; {app.registered} sessions registered "
           f"({app.late} late)")
    for number, text in INVARIANTS.items():
        found = violations[number]
        count = len(found) if number != 3 else len(outside)
        s.note(f"invariant {number} ({text}): {len(found)} " + ("found" if number == 3 else "violations")
               + (": " + "; ".join(found[:5]) if found else ""))
        if number != 3:
            s.check(count == 0, f"invariant {number}: 0 violations ({count})")
    s.check(not outside, f"every duplicate start was in flight at a kill ({len(outside)} were not)")
    s.check(len(kills) >= s.size(3, 8), f"at least {s.size(3, 8)} kills during the run ({len(kills)})")
    if model.duplicates_left_showing:
        s.note("duplicate activities still counting down (the app registered the other one of the pair): "
               + "; ".join(repr(a) for a in model.duplicates_left_showing[:5]))
    if lost:
        s.note("eligible devices showing nothing for a scheduled stream past T-lead: "
               + "; ".join(f"{d} {st}" for d, st in lost[:5]))
    accepted = len(model.starts)
    distinct = {key for *_, key in model.starts}
    s.counts = {"expected": len(distinct) - len(violations[4]) + len(lost), "accepted": accepted, "lost": len(lost),
                "duplicated": duplicated, "unexpected": len(violations[4])}
    if not rows:
        raise HarnessError("no streams found at the end")
    return None

