"""A model of each phone for scripts/chaos scenario 20: every accepted push replayed on what the phone would show.

iOS: an accepted push-to-start opens an activity (per device, stream and generation) showing the planned start its
content-state carries; the app registers the activity's runtime token as a session (the harness does that, see
`attach`); an accepted update to that token changes what the activity shows; an accepted end ends it. An end with
immediate dismissal for a stream still scheduled (SPEC 10.1, long reschedules) removes the activity: the device's next
push-to-start opens the next generation. A push-to-start while the device still has that generation's activity is a
duplicate (the phone shows two).

Android (`ANDROID_COUNTDOWN=on`, SPEC 10.4): data messages start/update/end with `seq`; the app applies a message only
when its seq is above the last it applied, and an end is final.

`check` judges the invariants once the run has settled. Pure: no I/O; `python3 device_model.py --self-test`.
"""

import collections
import sys

INVARIANTS = {
    1: "a live activity or countdown of a stream not ended shows its current planned start",
    2: "every activity or countdown of an ended stream is ended",
    3: "no device shows two activities of one stream and generation (duplicates, bounded by the starts in flight at kills)",
    4: "nothing is started for an ineligible device, or before T-lead",
    5: "nothing is sent to change an activity or countdown after its end",
}


class Activity:
    """One iOS Live Activity (or one Android countdown) on one phone."""

    def __init__(self, device, stream, generation, shows, opened_at, start_key):
        self.device = device
        self.stream = stream
        self.generation = generation
        self.shows = shows
        self.opened_at = opened_at
        self.start_key = start_key
        self.token = None  # the runtime token the app registered (iOS)
        self.ended = False
        self.ended_reason = None
        self.removed = False  # ended with immediate dismissal for a stream still scheduled: a new generation may start
        self.attached = 0  # order of the app's session registrations (the last one of a device and stream is its session)
        self.last_seq = 0  # Android
        self.end_seq = None  # Android

    def __repr__(self):
        state = f"ended:{self.ended_reason}" if self.ended else f"shows {self.shows}"
        return f"<{self.device} {self.stream} g{self.generation} {state}>"


class DeviceModel:
    """Every phone of a run: which token is whose, the activities each shows, and what went against the invariants."""

    def __init__(self, lead_seconds):
        self.lead = lead_seconds
        self.device_by_pts = {}
        self.device_by_fcm = {}
        self.platform = {}
        self.activities = collections.defaultdict(list)  # device -> [Activity], oldest first
        self.by_token = {}
        self.starts = []  # (device, stream, receivedAt, planned, key)
        self.duplicates = []  # start keys of duplicate activities
        self.after_end = []  # (device, stream, event)
        self.counts = collections.Counter()
        self.attached = 0

    # Tokens

    def device(self, device_id, platform):
        self.platform[device_id] = platform

    def push_to_start_token(self, device_id, token):
        self.device_by_pts[token] = device_id

    def fcm_token(self, device_id, token):
        self.device_by_fcm[token] = device_id

    def attach(self, activity, token):
        """The app registered `token` as the runtime token of `activity`."""
        activity.token = token
        self.by_token[token] = activity
        self.attached += 1
        activity.attached = self.attached

    # Replay

    def apply(self, record):
        """Replays one accepted message (a line of the fake FCM's record file); returns the iOS activity it opened, if
        any (the app then registers its runtime token)."""
        event = record.get("event")
        message = record.get("message") or {}
        at = float(record.get("receivedAt", 0))
        if event in ("start", "update", "end"):
            aps = (((message.get("apns") or {}).get("payload") or {}).get("aps")) or {}
            return self._ios(event, record, aps, at)
        if event in ("android_start", "android_update", "android_end"):
            self._android(event[len("android_"):], record, message.get("data") or {}, at)
            return None
        self.counts["other"] += 1
        return None

    def _ios(self, event, record, aps, at):
        state = aps.get("content-state") or {}
        stream = state.get("streamId") or (aps.get("attributes") or {}).get("streamId")
        self.counts["ios_" + event] += 1
        if event == "start":
            device = self.device_by_pts.get(record.get("liveActivityToken"))
            if device is None:
                self.counts["start_unknown_token"] += 1
                return None
            key = (stream, record.get("liveActivityToken"))
            return self._open(device, stream, state.get("scheduledStartAt"), at, key)
        activity = self.by_token.get(record.get("liveActivityToken"))
        if activity is None:
            self.counts[event + "_unknown_token"] += 1
            return None
        if activity.ended:
            if event == "update":
                self.after_end.append((activity.device, activity.stream, event))
            else:
                self.counts["end_repeated"] += 1
            return None
        if event == "update":
            activity.shows = state.get("scheduledStartAt")
            return None
        activity.ended = True
        activity.ended_reason = state.get("endedReason")
        dismissal = aps.get("dismissal-date")
        activity.removed = dismissal is not None and dismissal <= aps.get("timestamp", 0) + 1
        if activity.removed:
            self.counts["ios_dismissed_at_once"] += 1
        return None

    def _open(self, device, stream, planned, at, key):
        mine = [a for a in self.activities[device] if a.stream == stream]
        self.starts.append((device, stream, at, planned, key))
        if mine and not mine[-1].removed:
            self.duplicates.append(key)
            generation = mine[-1].generation
        else:
            generation = (mine[-1].generation + 1) if mine else 1
            if generation > 1:
                self.counts["ios_new_generation"] += 1
        activity = Activity(device, stream, generation, planned, at, key)
        self.activities[device].append(activity)
        return activity

    def _android(self, event, record, data, at):
        self.counts["android_" + event] += 1
        token = record.get("token")
        device = self.device_by_fcm.get(token)
        stream = data.get("streamId")
        if device is None:
            self.counts["android_unknown_token"] += 1
            return
        seq = int(data.get("seq", "0"))
        planned = int(data["scheduledStartAt"]) if data.get("scheduledStartAt") else None
        countdown = next((a for a in self.activities[device] if a.stream == stream), None)
        if event == "start":
            key = (stream, token)
            self.starts.append((device, stream, at, planned, key))
            if any(k == key for *_, k in self.starts[:-1]):
                self.duplicates.append(key)
        if countdown is None:
            countdown = Activity(device, stream, 1, planned, at, (stream, token))
            self.activities[device].append(countdown)
        elif countdown.ended:
            # End is final: the app ignores everything after it. A message numbered above the end went out after it.
            if event != "end" and seq > countdown.end_seq:
                self.after_end.append((device, stream, event))
            return
        elif seq <= countdown.last_seq:
            self.counts["android_older_ignored"] += 1
            return
        countdown.last_seq = seq
        if event == "end":
            countdown.ended, countdown.ended_reason, countdown.end_seq = True, data.get("endedReason"), seq
        else:
            countdown.shows = planned

    # Judging

    def check(self, streams, eligible_since, now):
        """Violations per invariant (1-5) and the findings behind them.

        `streams`: {stream: (status, planned epoch seconds)} as PostgreSQL has them at the end; `eligible_since(device,
        stream)`: the earliest moment the device could get a start of the stream (None: never eligible)."""
        violations = {n: [] for n in INVARIANTS}
        self.duplicates_left_showing = []
        for device, activities in self.activities.items():
            # Of a duplicate pair the app's last registration is the session the fleet knows; the other activity is the
            # duplicate's cost (counted under 3, listed in `duplicates_left_showing` when it still counts down).
            judged = {}
            for a in activities:
                key = (a.stream, a.generation)
                if key not in judged or a.attached >= judged[key].attached:
                    judged[key] = a
            for a in activities:
                if judged[(a.stream, a.generation)] is not a:
                    if not a.ended:
                        self.duplicates_left_showing.append(a)
                    continue
                status, planned = streams.get(a.stream, ("missing", None))
                if status == "scheduled":
                    if not a.ended and a.shows != planned:
                        violations[1].append(f"{a!r}: stream planned for {planned}")
                elif not a.ended:
                    violations[2].append(f"{a!r}: stream {status}")
        for key in self.duplicates:
            violations[3].append(f"duplicate start {key[0]} {key[1][-8:]}")
        for device, stream, at, planned, key in self.starts:
            since = eligible_since(device, stream)
            if since is None:
                violations[4].append(f"start of {stream} to ineligible {device}")
            elif at < since:
                violations[4].append(f"start of {stream} to {device} {since - at:.2f}s before it was eligible")
            elif planned is not None and at < planned - self.lead - 0.5:
                violations[4].append(f"start of {stream} to {device} {planned - self.lead - at:.2f}s before T-lead")
        for device, stream, event in self.after_end:
            violations[5].append(f"{event} to {device} for {stream} after its end")
        return violations

    def lost(self, streams, eligible_since, now):
        """Eligible devices of streams still scheduled past their T-lead that show nothing for them."""
        showing = {(a.device, a.stream) for acts in self.activities.values() for a in acts if not a.ended}
        missing = []
        for stream, (status, planned) in streams.items():
            if status != "scheduled" or planned - self.lead > now:
                continue
            for device in self.platform:
                since = eligible_since(device, stream)
                if since is not None and since < now and (device, stream) not in showing:
                    missing.append((device, stream))
        return missing

    def live_count(self):
        return sum(1 for acts in self.activities.values() for a in acts if not a.ended)


# MARK: - Self-test


def _ios_record(event, stream, token, planned=None, at=0.0, reason=None, dismissal=None, fcm="fcm-1"):
    state = {"streamId": stream, "scheduledStartAt": planned}
    aps = {"event": event, "timestamp": int(at), "content-state": state}
    if event == "start":
        aps["attributes"] = {"streamId": stream}
    if reason:
        state["endedReason"] = reason
        aps["dismissal-date"] = dismissal if dismissal is not None else int(at) + 900
    return {"event": event, "token": fcm, "liveActivityToken": token, "receivedAt": at, "message": {"apns": {"payload": {"aps": aps}}}}


def _android_record(event, stream, fcm, seq, planned, at=0.0, reason=None):
    data = {"streamId": stream, "seq": str(seq), "scheduledStartAt": str(planned)}
    if reason:
        data["endedReason"] = reason
    return {"event": "android_" + event, "token": fcm, "receivedAt": at, "message": {"data": data}}


def self_test():
    failures = []

    def expect(condition, text):
        if not condition:
            failures.append(text)

    always = lambda device, stream: 0.0  # noqa: E731
    # iOS: start, session, update, end; a second start for the same generation is a duplicate.
    m = DeviceModel(lead_seconds=10)
    m.device("d1", "ios")
    m.push_to_start_token("d1", "pts1")
    opened = m.apply(_ios_record("start", "s1", "pts1", planned=100, at=90))
    expect(opened is not None and opened.shows == 100, "a start opens an activity showing its planned start")
    m.attach(opened, "rt1")
    m.apply(_ios_record("update", "s1", "rt1", planned=130, at=91))
    expect(opened.shows == 130, "an update changes what the activity shows")
    v = m.check({"s1": ("scheduled", 130)}, always, 95)
    expect(all(not found for found in v.values()), f"nothing violated: {v}")
    v = m.check({"s1": ("scheduled", 140)}, always, 95)
    expect(len(v[1]) == 1, "an activity showing an old start violates 1")
    v = m.check({"s1": ("cancelled", 130)}, always, 95)
    expect(len(v[2]) == 1, "a live activity of a cancelled stream violates 2")
    m.apply(_ios_record("start", "s1", "pts1", planned=130, at=92))
    expect(m.duplicates == [("s1", "pts1")], "a second start of one generation is a duplicate")
    # A duplicate pair: the app's later registration is the session; the other one is the duplicate's cost, under 3.
    m1 = DeviceModel(lead_seconds=10)
    m1.device("d1", "ios")
    m1.push_to_start_token("d1", "pts1")
    first = m1.apply(_ios_record("start", "s1", "pts1", planned=100, at=90))
    second = m1.apply(_ios_record("start", "s1", "pts1", planned=100, at=90.1))
    m1.attach(first, "rtA")
    m1.attach(second, "rtB")
    m1.apply(_ios_record("end", "s1", "rtB", at=95, reason="cancelled"))
    v = m1.check({"s1": ("cancelled", 100)}, always, 96)
    expect(not v[2] and len(v[3]) == 1 and m1.duplicates_left_showing == [first],
           f"a duplicate's leftover activity counts under 3, not 2: {v}")
    # An end, then an update to the ended activity: not applied, and counted.
    m2 = DeviceModel(lead_seconds=10)
    m2.device("d1", "ios")
    m2.push_to_start_token("d1", "pts1")
    a = m2.apply(_ios_record("start", "s1", "pts1", planned=100, at=90))
    m2.attach(a, "rt1")
    m2.apply(_ios_record("end", "s1", "rt1", at=91, reason="cancelled"))
    m2.apply(_ios_record("update", "s1", "rt1", planned=120, at=92))
    expect(a.ended and a.shows == 100, "nothing is applied after an end")
    v = m2.check({"s1": ("cancelled", 120)}, always, 95)
    expect(len(v[5]) == 1 and not v[2], f"an update after an end violates 5 only: {v}")
    # A long reschedule: immediate dismissal, then the next push-to-start is generation 2, not a duplicate.
    m3 = DeviceModel(lead_seconds=10)
    m3.device("d1", "ios")
    m3.push_to_start_token("d1", "pts1")
    a = m3.apply(_ios_record("start", "s1", "pts1", planned=100, at=90))
    m3.attach(a, "rt1")
    m3.apply(_ios_record("end", "s1", "rt1", at=91, reason="cancelled", dismissal=91))
    b = m3.apply(_ios_record("start", "s1", "pts1", planned=40000, at=39990))
    expect(b.generation == 2 and not m3.duplicates, "a start after an immediate dismissal opens generation 2")
    v = m3.check({"s1": ("scheduled", 40000)}, always, 39995)
    expect(all(not found for found in v.values()), f"generation 2 is fine: {v}")
    # Eligibility and T-lead.
    v = m3.check({"s1": ("scheduled", 40000)}, lambda device, stream: None, 39995)
    expect(len(v[4]) == 2, "starts to an ineligible device violate 4")
    m4 = DeviceModel(lead_seconds=10)
    m4.device("d1", "ios")
    m4.push_to_start_token("d1", "pts1")
    m4.apply(_ios_record("start", "s1", "pts1", planned=100, at=80))
    v = m4.check({"s1": ("scheduled", 100)}, always, 95)
    expect(len(v[4]) == 1, "a start before T-lead violates 4")
    expect(m4.lost({"s1": ("scheduled", 100)}, always, 95) == [], "a device showing its activity is not lost")
    expect(DeviceModel(10).lost({"s1": ("scheduled", 100)}, always, 95) == [], "no devices, nothing lost")
    # Android: seq order, end is final, a message numbered after the end is counted.
    m5 = DeviceModel(lead_seconds=10)
    m5.device("a1", "android")
    m5.fcm_token("a1", "fcmA")
    m5.apply(_android_record("start", "s1", "fcmA", 1, 100, at=90))
    m5.apply(_android_record("update", "s1", "fcmA", 3, 120, at=91))
    m5.apply(_android_record("update", "s1", "fcmA", 2, 110, at=92))
    countdown = m5.activities["a1"][0]
    expect(countdown.shows == 120, "an older seq is ignored")
    m5.apply(_android_record("end", "s1", "fcmA", 4, 120, at=93, reason="ready"))
    m5.apply(_android_record("update", "s1", "fcmA", 5, 150, at=94))
    expect(countdown.ended and countdown.shows == 120, "end is final")
    v = m5.check({"s1": ("ready", 120)}, always, 95)
    expect(len(v[5]) == 1 and not v[2], f"an update numbered after the end violates 5: {v}")
    m5.apply(_android_record("start", "s1", "fcmA", 1, 100, at=95))
    expect(m5.duplicates == [("s1", "fcmA")], "a second Android start to one token is a duplicate")
    for text in failures:
        print("device_model self-test FAILED:", text, file=sys.stderr)
    if not failures:
        print("device_model self-test: ok")
    return 1 if failures else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    print("usage: device_model.py --self-test", file=sys.stderr)
    sys.exit(2)
