#!/usr/bin/env bash
# The Rust tests as `make test` runs them (`cargo test --workspace --all-targets`,
# which runs every test target: unit, integration and the end-to-end tests of the real
# window), with every core held busy by a busy loop the whole time. CI machines are
# loaded: a test that passes only on an idle one (a frame rate, a count in a time
# window, a wait too short) fails here. Used by `make loaded-test`; not part of `make
# test`. Arguments go to cargo test (`-- missions::` runs only the tests named so).
set -euo pipefail
cd "$(dirname "$0")/.."
export CI="${CI:-}" CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

# Built before the load starts: the point is tests on a busy machine, not a slow build.
make --no-print-directory deps-test
make --no-print-directory ui
cargo build --workspace --all-targets

busy=()
stop_load() {
  for pid in "${busy[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
}
trap stop_load EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
cores=$(nproc)
for _ in $(seq "$cores"); do
  sh -c 'while :; do :; done' &
  busy+=($!)
done
echo "loaded-test: $cores busy loops (${busy[*]}) hold every core" >&2

start=$SECONDS
rc=0
scripts/with-keyring.sh cargo test --workspace --all-targets "$@" || rc=$?
echo "loaded-test: exit $rc after $((SECONDS - start)) s under load" >&2
exit $rc
