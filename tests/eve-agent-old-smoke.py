#!/usr/bin/env python3
"""Smoke check of a running old eve test agent (0.80.1, 0.64.1 or 0.30.8).

Drives every scripted scenario of tests/eve-agent-<version>/ over HTTP and
checks the few facts eve-agent-old-WIRE.md relies on. Standard library only.

    python3 tests/eve-agent-old-smoke.py 0.80.1 http://127.0.0.1:4801

Key: $EVE_TEST_KEY, default eve-test-key. Takes about 15 s (the slow turn
is cancelled after 2 s). Exit status 0 when every check passed.
"""

import json
import os
import sys
import time
import urllib.error
import urllib.request

VERSION, BASE = sys.argv[1], sys.argv[2].rstrip("/")
KEY = os.environ.get("EVE_TEST_KEY", "eve-test-key")
# 0.30.8 addresses follow-ups by continuationToken; later releases by id only.
TOKENS = VERSION == "0.30.8"
failures = []


def call(method, path, body=None, key=KEY):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(BASE + path, data=data, method=method)
    if data is not None:
        req.add_header("content-type", "application/json")
    if key:
        req.add_header("authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(req, timeout=10) as res:
            return res.status, json.loads(res.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


def events(session_id, seconds=1.5):
    """Everything recorded so far (reads the live stream for a moment)."""
    req = urllib.request.Request(f"{BASE}/eve/v1/session/{session_id}/stream")
    req.add_header("authorization", f"Bearer {KEY}")
    lines = b""
    try:
        with urllib.request.urlopen(req, timeout=seconds) as res:
            while True:
                chunk = res.read1(65536)
                if not chunk:
                    break
                lines += chunk
    except Exception:  # the stream follows; a read timeout ends it
        pass
    return [json.loads(l) for l in lines.split(b"\n") if l.strip().startswith(b"{")]


def wait_for(session_id, predicate, what, limit=15):
    deadline = time.time() + limit
    while time.time() < deadline:
        evs = events(session_id)
        if predicate(evs):
            print(f"ok   saw {what}")
            return evs
    check(False, f"{session_id}: timed out waiting for {what}")
    return events(session_id)


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def start(objective):
    status, body = call("POST", "/eve/v1/session", {"message": f"MISSION OBJECTIVE: {objective}"})
    check(status in (200, 202) and body.get("ok"), f"create '{objective}' -> {status}")
    return body["sessionId"], body.get("continuationToken")


def send(session_id, token, body):
    if TOKENS:
        body = {"continuationToken": token, **body}
    return call("POST", f"/eve/v1/session/{session_id}", body)


def completed_texts(evs):
    return [e["data"].get("message") or "" for e in evs if e["type"] == "message.completed"]


def waits(evs, n=1):
    return sum(1 for e in evs if e["type"] == "session.waiting") >= n


status, body = call("GET", "/eve/v1/health", key=None)
check(status == 200 and body.get("ok"), "health without a key")
status, body = call("POST", "/eve/v1/session", {"message": "MISSION OBJECTIVE: x"}, key="wrong")
check(status == 401 and body.get("code") == "unauthorized", "wrong key -> 401 unauthorized")

# default: search, then a report citing example.org
sid, tok = start("Find facts about otters")
evs = wait_for(sid, waits, "the report")
check(any("https://example.org/" in t for t in completed_texts(evs)), "default: report cites example.org")
status, _ = send(sid, tok, {"message": "thanks"})
evs = wait_for(sid, lambda e: waits(e, 2), "the echo")
check(any(t == "You said: thanks" for t in completed_texts(evs)), "follow-up: 'You said: thanks'")

# question: answered with inputResponses by option id
sid, tok = start("Ask me a question")
evs = wait_for(sid, lambda e: any(x["type"] == "input.requested" for x in e), "the question")
req = next(x for x in evs if x["type"] == "input.requested")["data"]["requests"][0]
check(req["kind"] == "question" and len(req["options"]) == 2, "question: two options")
status, _ = send(sid, tok, {"inputResponses": [{"requestId": req["requestId"], "optionId": req["options"][1]["id"]}]})
check(status in (200, 202), f"question: inputResponses accepted ({status})")
evs = wait_for(sid, lambda e: any('You answered: "Narrow"' in t for t in completed_texts(e)), "the quoted answer")

# approval: approve, and deny in a second session
for decision in ("approve", "deny"):
    sid, tok = start(f"Publish after approval ({decision})")
    evs = wait_for(sid, lambda e: any(x["type"] == "input.requested" for x in e), "the approval")
    req = next(x for x in evs if x["type"] == "input.requested")["data"]["requests"][0]
    ids = [o["id"] for o in req["options"]]
    check(req["kind"] == "tool-approval" and ids[0] == "approve", f"approval: options {ids}")
    option = "approve" if decision == "approve" else ids[1]
    send(sid, tok, {"inputResponses": [{"requestId": req["requestId"], "optionId": option}]})
    want = "Published the report" if decision == "approve" else "Publication was denied"
    wait_for(sid, lambda e: any(want in t for t in completed_texts(e)), f"'{want}'")

# delegate: the researcher's findings reach the parent's report
sid, tok = start("Delegate otter research")
evs = wait_for(sid, lambda e: any("# Delegated report" in t for t in completed_texts(e)), "the delegated report")
check(any(x["type"] in ("agent.started", "subagent.called") for x in evs), "delegate: child session announced")

# slow: cancel after 2 s; the turn ends turn.cancelled then session.waiting
sid, tok = start("slow walk")
time.sleep(2)
status, body = call("POST", f"/eve/v1/session/{sid}/cancel")
check(status == 202 and body.get("status") == "accepted", f"cancel -> {status} {body}")
evs = wait_for(sid, lambda e: any(x["type"] == "turn.cancelled" for x in e), "turn.cancelled")
types = [x["type"] for x in evs]
check(types[-2:] == ["turn.cancelled", "session.waiting"], f"slow: ends {types[-2:]}")

print(f"{VERSION}: {'all checks passed' if not failures else str(len(failures)) + ' failed'}")
sys.exit(1 if failures else 0)
