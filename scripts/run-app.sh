#!/usr/bin/env bash
# Opens the built app. Without a display it says so, starts a private Xvfb display,
# runs the app on it, prints a command that takes a screenshot of it, and stops the
# display when the app exits.
set -euo pipefail
cd "$(dirname "$0")/.."
# `make run` builds what users get: the release app, without test hooks.
app="${CARGO_TARGET_DIR:-target}/release/casebook-app"
if [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
  exec "$app"
fi

echo "run-app: no display found (DISPLAY and WAYLAND_DISPLAY are unset); running Casebook under Xvfb." >&2
# Xvfb, xauth (scripts/install-deps.sh build) and mcookie (util-linux, always there).
# Not xvfb-run: it keeps its cookie to itself, so nothing else can look at the window.
xdir="$(mktemp -d "${TMPDIR:-/tmp}/casebook-xvfb.XXXXXX")" # mode 700: only this user reads the cookie
xvfb_pid=""
stop_display() {
  if [ -n "$xvfb_pid" ]; then
    kill "$xvfb_pid" 2>/dev/null || true
    wait "$xvfb_pid" 2>/dev/null || true
  fi
  rm -rf "$xdir"
}
trap stop_display EXIT

# One cookie, in two files: the server accepts every cookie in its file whatever display
# it names, and a client looks its display's number up in $XAUTHORITY, which is known
# only once Xvfb has picked a free display.
cookie="$(mcookie)"
: >"$xdir/server"
: >"$xdir/Xauthority"
xauth -q -f "$xdir/server" add :0 MIT-MAGIC-COOKIE-1 "$cookie"
# -displayfd: Xvfb takes the first free display number and writes it there once it
# accepts clients. Local connections only, and only with the cookie.
: >"$xdir/display"
Xvfb -displayfd 3 -screen 0 1600x1000x24 -nolisten tcp -auth "$xdir/server" \
  3>"$xdir/display" 2>"$xdir/xvfb.log" &
xvfb_pid=$!
n=""
for _ in $(seq 100); do
  n="$(head -n 1 "$xdir/display")"
  if [ -n "$n" ] || ! kill -0 "$xvfb_pid" 2>/dev/null; then break; fi
  sleep 0.1
done
if [ -z "$n" ]; then
  echo "run-app: Xvfb did not start:" >&2
  cat "$xdir/xvfb.log" >&2
  exit 1
fi

export DISPLAY=":$n" XAUTHORITY="$xdir/Xauthority"
xauth -q add "$DISPLAY" MIT-MAGIC-COOKIE-1 "$cookie"
# imagemagick's import (scripts/install-deps.sh build); %q quotes a TMPDIR with spaces.
printf 'run-app: Casebook is on display %s. To see it, from another shell (as this user):\n' "$DISPLAY" >&2
printf '  XAUTHORITY=%q import -display %s -window root shot.png\n' "$XAUTHORITY" "$DISPLAY" >&2
echo "run-app: Ctrl+C stops Casebook and the display." >&2
"$app"
