#!/usr/bin/env bash
# Checks that the sandbox's /openapi.json describes exactly what the sandbox does:
# Schemathesis, with every check, against a fresh `casebook-sandbox` on loopback.
# Needs target/debug/casebook-sandbox (the build stage makes it). Exits non-zero on
# any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

# Schemathesis goes into the project's venv beside python-docx (scripts/install-tools.sh).
venv=.venv
version=4.32.5
if [ ! -x "$venv/bin/schemathesis" ] || [ "$("$venv/bin/schemathesis" --version 2>/dev/null | awk '{print $NF}')" != "$version" ]; then
  echo "schemathesis: installing schemathesis $version into $venv" >&2
  [ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$version" </dev/null
fi

sandbox=target/debug/casebook-sandbox
if [ ! -x "$sandbox" ]; then
  cargo build -p casebook-sandbox --bin casebook-sandbox
fi

work=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# No rate limit: Schemathesis sends hundreds of requests a minute, and answers that
# are all 429 would check nothing but the 429. The seeds' own mission protocol: an eve
# stream (the sandbox's default) is held open by design until its lease ends, which a
# fuzzer reading one response per case takes for a timeout, and its NDJSON records
# cannot be checked against a schema; eve's routes are tested by sandbox/tests/eve.rs.
"$sandbox" --pace instant --rate-limit 0 --mission-protocol legacy >"$work/url" 2>"$work/log" </dev/null &
pid=$!
for _ in $(seq 100); do
  [ -s "$work/url" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/log" >&2; echo "schemathesis: the sandbox did not start" >&2; exit 1; }
  sleep 0.1
done
base=$(head -n 1 "$work/url")
[ -n "$base" ] || { echo "schemathesis: the sandbox printed no URL" >&2; exit 1; }
echo "schemathesis: sandbox at $base" >&2

# A fixed seed, one worker and a bounded number of examples keep the run reproducible
# (two workers share Hypothesis's internal caches, and once raised a FlakyFailure from
# inside Schemathesis's own generator, with no check failing); most of its few minutes
# are missions streaming at the paceMs that Schemathesis picked. The database is off so
# one run cannot steer the next. Run from the scratch dir, where Schemathesis leaves
# its .schemathesis/ state.
root=$PWD
cd "$work"
"$root/$venv/bin/schemathesis" --config-file "$root/src-tauri/sandbox/schemathesis/schemathesis.toml" \
  run "$base/openapi.json" \
  --checks all \
  -H "Authorization: Bearer cbx_sandbox_demo_key" \
  --exclude-path-regex '^/_sandbox/' \
  --max-examples 15 \
  --workers 1 \
  --seed 1 \
  --generation-database none \
  --no-color \
  --report-dir "$work/report" </dev/null
