#!/usr/bin/env python3
"""Prints each push the fake FCM accepted as one readable line, until told to stop.

usage: demo_narrate.py <fake-base-url> <database-url> <stop-file>
"""
import json
import os
import subprocess
import sys
import time
import urllib.request

fake, database, stop_file = sys.argv[1:4]


def devices():
    out = subprocess.run(["psql", "-Atq", database, "-F", "\t", "-c",
                          "SELECT coalesce(fcm_token, ''), device_id, coalesce(user_id, '') FROM devices"],
                         capture_output=True, text=True).stdout
    table = {}
    for line in out.splitlines():
        token, device, user = (line.split("\t") + ["", "", ""])[:3]
        if token:
            table[token] = (device, user)
    return table


def describe(push, known):
    device, _ = known.get(push.get("token", ""), ("?", "?"))
    message = push.get("message", {})
    event = push.get("event", "?")
    if event == "notification":
        note = message.get("notification", {})
        return f"reminder → {device:<20} \"{note.get('title', '')}: {note.get('body', '')}\""
    if event.startswith("android_"):
        data = message.get("data", {})
        kind = event[len("android_"):]
        what = (f"reason {data.get('endedReason', '?'):<9} opens {data.get('deepLink', '?')}" if kind == "end"
                else f"\"{data.get('body', '')}\" starts at {data.get('scheduledStartAt', '?')}")
        return (f"android {kind:<7}→ {device:<20} {data.get('streamId', '?'):<14} seq {data.get('seq', '?')} "
                f"{message.get('android', {}).get('priority', '?'):<6} {what}")
    aps = message.get("apns", {}).get("payload", {}).get("aps", {})
    state = aps.get("content-state", {})
    stream = state.get("streamId", "?")
    if event == "start":
        alert = aps.get("alert", {})
        role = aps.get("attributes", {}).get("role", "?")
        return f"start    → {device:<20} {stream:<14} as {role:<7} \"{alert.get('body', '')}\""
    if event == "end":
        return (f"end      → {device:<20} {stream:<14} reason {state.get('endedReason', '?'):<9} "
                f"opens {state.get('deepLinkUrl', '?')}")
    return f"{event:<8} → {device:<20} {stream:<14} starts at {state.get('scheduledStartAt', '?')}"


since = 0
known = devices()
while True:
    try:
        with urllib.request.urlopen(f"{fake}/fake/messages?since={since}&limit=500", timeout=5) as answer:
            pushes = json.load(answer)
    except OSError:
        pushes = []
    for push in pushes:
        since = max(since, push.get("seq", since))
        if push.get("token") not in known:
            known = devices()
        print(f"  {time.strftime('%H:%M:%S')}  {describe(push, known)}", flush=True)
    if os.path.exists(stop_file) and not pushes:
        break
    time.sleep(0.3)
