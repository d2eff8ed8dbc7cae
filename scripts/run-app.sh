#!/usr/bin/env bash
# Opens the built app. Without a display it says so and runs under Xvfb.
set -euo pipefail
cd "$(dirname "$0")/.."
# `make run` builds what users get: the release app, without test hooks.
app="${CARGO_TARGET_DIR:-target}/release/casebook-app"
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  echo "run-app: no display found (DISPLAY and WAYLAND_DISPLAY are unset); running Casebook under Xvfb." >&2
  echo "run-app: take a look with: xwd -root -display :99 | convert xwd:- shot.png   (Ctrl+C stops)" >&2
  exec xvfb-run --server-num=99 --server-args="-screen 0 1600x1000x24" "$app"
fi
exec "$app"
