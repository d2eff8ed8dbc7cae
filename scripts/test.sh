#!/usr/bin/env bash
# Every test Casebook has, headless, with the time each stage took.
# Used by `make test` and by CI (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
export CI="${CI:-}" CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

timings=()
stage() {
  local name=$1; shift
  local start=$SECONDS
  echo "=== $name"
  local rc=0
  "$@" || rc=$?
  timings+=("$(printf '%-12s %4ds%s' "$name" $((SECONDS - start)) "$([ $rc -eq 0 ] || echo "  (failed: exit $rc)")")")
  return $rc
}
report() {
  echo "=== stage timings"
  printf '%s\n' "${timings[@]}"
}
trap report EXIT

stage deps make --no-print-directory deps-test
stage ui-build make --no-print-directory ui
stage ui-test bash -c 'cd ui && npx vitest run'
stage build cargo build --workspace --all-targets
stage schemathesis scripts/schemathesis.sh
stage lint make --no-print-directory lint
# Rust unit, integration and end-to-end tests, all with a real private keyring.
stage rust-test scripts/with-keyring.sh cargo test --workspace --all-targets
