#!/usr/bin/env bash
# Prints, as an absolute path, the folder cargo builds into from this checkout: what
# CARGO_TARGET_DIR says (relative to the checkout, where `make` runs cargo), what a
# .cargo/config sets, or target/. Cargo's own answer, so it cannot disagree with the
# build; run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(cargo metadata --format-version 1 --no-deps --offline \
  | node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => console.log(JSON.parse(s).target_directory))')
realpath -m "$dir"
