#!/usr/bin/env python3
"""Drive a running test agent through every scenario and print what went over the wire.

WIRE.md was written from this script's output. Run it again after changing the agent or
eve's version (stdlib only):

    scripts/eve-server.sh start 1.0.1 4711 &
    python3 tests/eve-agent/wire_capture.py http://127.0.0.1:4711 > /tmp/wire.txt

Long runs of content.delta records are shortened; every other line is printed whole.
With WIRE_RECORD_DIR set, every stream read is also kept there whole, one .ndjson file
each, named by its scenario (the fuzz targets' seeds were recorded this way).
"""
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.request

BASE = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:4711"
KEY = os.environ.get("EVE_TEST_KEY") or "eve-test-key"
SHOWN_HEADERS = ("content-type", "cache-control", "www-authenticate", "x-accel-buffering")
RECORD_DIR = os.environ.get("WIRE_RECORD_DIR")
FOLLOWERS = []
SECTION = ["start"]


def mission(objective):
    return (
        "MISSION TYPE: research\nMISSION BUDGET TYPE: fixed\n"
        f"MISSION BUDGET (hard maximum): $25 USD\nMISSION OBJECTIVE:\n{objective}"
    )


def request(method, path, body=None, key=KEY, show=True):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(BASE + path, data=data, method=method)
    if body is not None:
        req.add_header("content-type", "application/json")
    if key is not None:
        req.add_header("authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            status, headers, text = r.status, r.headers, r.read().decode()
    except urllib.error.HTTPError as e:
        status, headers, text = e.code, e.headers, e.read().decode()
    if show:
        shown = {k.lower(): v for k, v in headers.items() if k.lower() in SHOWN_HEADERS or k.lower().startswith("x-eve")}
        print(f"\n> {method} {path}" + ("" if body is None else f"  {json.dumps(body)}") + ("" if key == KEY else f"  [key: {key!r}]"))
        print(f"< {status} {json.dumps(shown)}")
        print(f"< {text}")
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text


class Follower(threading.Thread):
    """Reads a session's stream live (follow mode) and keeps every line."""

    def __init__(self, session, start=None):
        super().__init__(daemon=True)
        self.path = f"/eve/v1/session/{session}/stream" + ("" if start is None else f"?startIndex={start}")
        self.lines, self.headers, self.status = [], {}, None
        self.section = SECTION[0]
        FOLLOWERS.append(self)
        self.start()

    def run(self):
        req = urllib.request.Request(BASE + self.path, headers={"authorization": f"Bearer {KEY}"})
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                self.status, self.headers = r.status, dict(r.headers)
                for raw in r:
                    line = raw.decode().rstrip("\n")
                    if line:
                        self.lines.append(line)
                    if line == '{"$eve":"stream.ended"}':
                        return
        except Exception as e:  # the test is over, or the lease ended
            self.lines.append(f"[reader stopped: {e!r}]")

    def facts(self):
        for line in list(self.lines):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            yield from record.get("facts", [])

    def wait_for(self, predicate, timeout=90):
        end = time.time() + timeout
        while time.time() < end:
            for fact in self.facts():
                if predicate(fact):
                    return fact
            time.sleep(0.05)
        raise TimeoutError(f"waited {timeout}s on {self.path}")

    def wait_type(self, kind, timeout=90, **data):
        return self.wait_for(
            lambda f: f["type"] == kind and all(f.get("data", {}).get(k) == v for k, v in data.items()),
            timeout,
        )

    def show(self, title="stream"):
        shown = {k.lower(): v for k, v in self.headers.items() if k.lower().startswith("x-") or k.lower() in SHOWN_HEADERS}
        print(f"\n--- {title}: GET {self.path} -> {self.status} {json.dumps(shown)}")
        print_lines(self.lines)


def print_lines(lines):
    run = []  # consecutive content.delta lines

    def flush():
        if len(run) <= 4:
            for line in run:
                print(line)
        else:
            print(run[0])
            print(run[1])
            print(f"  ... {len(run) - 3} more content.delta records ...")
            print(run[-1])
        run.clear()

    for line in lines:
        if '"type":"content.delta"' in line:
            run.append(line)
            continue
        flush()
        if len(line) > 1500:
            line = line[:700] + f" ...[{len(line) - 1400} chars]... " + line[-700:]
        print(line)
    flush()


def create(objective, **extra):
    status, body = request("POST", "/eve/v1/session", {"message": mission(objective), **extra})
    return body["sessionId"]


def section(title):
    SECTION[0] = title
    print(f"\n\n===== {title} =====")


def record():
    """Each stream read, whole, as WIRE_RECORD_DIR/<n>-<section>.ndjson."""
    os.makedirs(RECORD_DIR, exist_ok=True)
    for n, f in enumerate(FOLLOWERS):
        slug = "".join(c if c.isalnum() else "-" for c in f.section.lower()).strip("-")
        kept = [line for line in f.lines if line.startswith("{")]
        with open(os.path.join(RECORD_DIR, f"{n:02}-{slug}.ndjson"), "w") as out:
            out.write("".join(line + "\n" for line in kept))


def scenario_basics():
    section("health, info, refused keys")
    request("GET", "/eve/v1/health", key=None)
    status, info = request("GET", "/eve/v1/info", show=False)
    print(f"\n> GET /eve/v1/info\n< {status} keys={sorted(info) if isinstance(info, dict) else info!r}")
    if isinstance(info, dict):
        print("< kind/version/agent:", json.dumps({k: info.get(k) for k in ("kind", "version")}), json.dumps(info.get("agent"))[:600])
    request("GET", "/eve/v1/info", key="wrong-key")
    request("POST", "/eve/v1/session", {"message": mission("x")}, key="wrong-key")
    request("POST", "/eve/v1/session", {"message": mission("x")}, key=None)
    request("GET", "/eve/v1/session/wrun_unknown/stream?follow=false", key="wrong-key")
    request("GET", "/eve/v1/session/wrun_unknown/stream?follow=false")
    request("POST", "/eve/v1/session/wrun_unknown", {"message": "hi"})
    request("POST", "/eve/v1/session", {"nothing": True})
    request("POST", "/eve/v1/session", {"message": ""})


def scenario_default_and_reply():
    section("default: search then report; a reply after the turn; reading with startIndex")
    s = create("How do honey bees navigate?")
    f = Follower(s)
    f.wait_type("turn.settled", turnId="turn_0")
    request("POST", f"/eve/v1/session/{s}", {"message": "Thanks, what about bumblebees?"})
    f.wait_type("turn.settled", turnId="turn_1")
    time.sleep(0.3)
    f.show()
    g = Follower(s, start=len([l for l in f.lines if not l.startswith("{\"$eve")]) - 2)
    time.sleep(1.5)
    g.show("resume from a cursor (live)")
    status, _ = request("GET", f"/eve/v1/session/{s}/stream?startIndex=-1&includeTailIndex=1")
    request("POST", f"/eve/v1/session/{s}/cancel", {})
    time.sleep(0.5)
    request("GET", f"/eve/v1/session/{s}/stream?startIndex=-2&follow=false")


def scenario_question(how):
    section(f"question answered by {how}")
    s = create("A question about which period to cover")
    f = Follower(s)
    opened = f.wait_type("interaction.opened")
    f.wait_type("turn.paused")
    iid = opened["data"]["interactionId"]
    if how == "optionId":
        request("POST", f"/eve/v1/session/{s}", {"answers": [{"interactionId": iid, "optionId": "Last decade"}]})
    elif how == "text":
        request("POST", f"/eve/v1/session/{s}", {"answers": [{"interactionId": iid, "text": "Only 2019 to 2021"}]})
    else:
        request("POST", f"/eve/v1/session/{s}", {"message": "Last year"})
    f.wait_type("turn.settled")
    time.sleep(0.3)
    f.show()
    request("POST", f"/eve/v1/session/{s}", {"answers": [{"interactionId": iid, "optionId": "Last year"}]})
    time.sleep(1)
    request("GET", f"/eve/v1/session/{s}/stream?startIndex=-3&follow=false")


def scenario_approval(how):
    section(f"approval: {how}")
    s = create("Needs approval before publishing")
    f = Follower(s)
    iid = f.wait_type("interaction.opened")["data"]["interactionId"]
    f.wait_type("turn.paused")
    if how == "approve":
        request("POST", f"/eve/v1/session/{s}", {"answers": [{"interactionId": iid, "optionId": "approve"}]})
    elif how == "deny":
        request("POST", f"/eve/v1/session/{s}", {"answers": [{"interactionId": iid, "optionId": "deny", "text": "Not yet."}]})
    elif how == "bad option":
        request("POST", f"/eve/v1/session/{s}", {"answers": [{"interactionId": iid, "optionId": "maybe"}]})
        time.sleep(1)
        request("POST", f"/eve/v1/session/{s}", {"message": "approve"})
        f.wait_type("turn.settled")
        request("POST", f"/eve/v1/session/{s}", {"answers": [{"interactionId": "no-such-interaction", "optionId": "approve"}]})
        f.wait_type("turn.settled", turnId="turn_1")
    elif how == "cancel":
        request("POST", f"/eve/v1/session/{s}/cancel", {})
        f.wait_type("turn.settled")
        request("POST", f"/eve/v1/session/{s}", {"answers": [{"interactionId": iid, "optionId": "approve"}]})
        f.wait_type("turn.settled", turnId="turn_1")
    else:
        request("POST", f"/eve/v1/session/{s}", {"message": "Wait, publish it tomorrow instead."})
    f.wait_type("turn.settled")
    time.sleep(0.5)
    f.show()


def scenario_cancel():
    section("cancel during a slow turn (one long model step), then a reply")
    s = create("A slow mission, slow 60")
    f = Follower(s)
    f.wait_type("model.started")
    time.sleep(2)
    request("POST", f"/eve/v1/session/{s}/cancel", {})
    f.wait_type("turn.settled", turnId="turn_0")
    request("POST", f"/eve/v1/session/{s}/cancel", {})
    request("POST", f"/eve/v1/session/{s}/cancel", {"turnId": "turn_0"})
    time.sleep(0.5)
    request("POST", f"/eve/v1/session/{s}", {"message": "Start again please."})
    f.wait_type("turn.settled", turnId="turn_1")
    time.sleep(0.5)
    f.show()


def scenario_reply_while_running(objective, wait):
    section(f"a reply while the turn runs: {objective}")
    s = create(objective)
    f = Follower(s)
    f.wait_type("model.started")
    time.sleep(2.5)
    request("POST", f"/eve/v1/session/{s}", {"message": "Please also look at wasps."})
    said = f.wait_for(lambda x: x["type"] == "content.completed" and "You said" in x["data"]["value"], wait)
    f.wait_type("turn.settled", turnId=said["scope"]["turnId"])
    time.sleep(0.5)
    f.show()


def scenario_cancel_steps():
    section("cancel between steps of a multi-step turn")
    s = create("Work in steps")
    f = Follower(s)
    f.wait_type("call.settled")
    request("POST", f"/eve/v1/session/{s}/cancel", {"turnId": "turn_9"})
    request("POST", f"/eve/v1/session/{s}/cancel", {"turnId": "turn_0"})
    f.wait_type("turn.settled")
    time.sleep(0.5)
    f.show()


def scenario_delegate():
    section("delegate to the researcher subagent; the child's stream")
    s = create("Please delegate the bee research")
    f = Follower(s)
    child = f.wait_type("child.opened")["data"]
    f.wait_type("turn.settled")
    time.sleep(0.5)
    f.show()
    c = Follower(child["sessionId"], start=0)
    time.sleep(2)
    c.show("child stream (same key)")


def scenario_delegate_cancel():
    section("cancel while the researcher works (delegate ... slow 20)")
    s = create("Please delegate this, slow 20")
    f = Follower(s)
    child = f.wait_type("child.opened")["data"]
    c = Follower(child["sessionId"], start=0)
    c.wait_type("model.started", runId="run_1")
    time.sleep(1)
    request("POST", f"/eve/v1/session/{s}/cancel", {})
    f.wait_type("turn.settled")
    c.wait_type("turn.settled")
    time.sleep(1.5)
    f.show()
    c.show("child stream")


def scenario_long():
    section("long 3000")
    s = create("A long answer, long 3000")
    f = Follower(s)
    f.wait_type("turn.settled")
    time.sleep(0.3)
    deltas = [l for l in f.lines if '"content.delta"' in l]
    text = "".join(json.loads(l)["progress"]["data"]["delta"] for l in deltas)
    print(f"\n{len(deltas)} content.delta records carried {len(text)} chars ({len(text.split())} words)")
    f.show()


def scenario_retry_fail_end():
    section("retry")
    s = create("Please retry this")
    f = Follower(s)
    f.wait_type("turn.settled")
    time.sleep(0.3)
    f.show()

    section("fail (non-retryable model error)")
    s = create("This mission will fail")
    f = Follower(s)
    f.wait_type("session.ended")
    time.sleep(1)
    f.show()
    request("POST", f"/eve/v1/session/{s}", {"message": "Are you there?"})
    request("POST", f"/eve/v1/session/{s}/cancel", {})
    request("GET", f"/eve/v1/session/{s}/stream?follow=false")

    section("end a session by hand")
    s = create("How do ants find food?")
    f = Follower(s)
    f.wait_type("turn.settled")
    request("POST", f"/eve/v1/session/{s}/end", {"reason": "Done here"})
    f.wait_type("session.ended")
    time.sleep(1)
    f.show()
    request("POST", f"/eve/v1/session/{s}", {"message": "One more thing"})


SCENARIOS = {
    "basics": scenario_basics,
    "default": scenario_default_and_reply,
    "question": lambda: [scenario_question(h) for h in ("optionId", "text", "message")],
    "approval": lambda: [scenario_approval(h) for h in ("approve", "deny", "bad option", "message", "cancel")],
    "cancel": lambda: (scenario_cancel(), scenario_cancel_steps()),
    "steer": lambda: (scenario_reply_while_running("Work in steps", 60), scenario_reply_while_running("A slow mission, slow 8", 60)),
    "delegate": lambda: (scenario_delegate(), scenario_delegate_cancel()),
    "long": scenario_long,
    "ends": scenario_retry_fail_end,
}

if __name__ == "__main__":
    for name in sys.argv[2:] or SCENARIOS:
        SCENARIOS[name]()
    if RECORD_DIR:
        time.sleep(1)
        record()
