#!/usr/bin/env bash
# Runs a command with a real, private, unlocked Secret Service (gnome-keyring) on a
# private D-Bus session bus, so tests exercise the OS keyring without touching the
# developer's own. Everything lives in a temporary XDG_DATA_HOME/XDG_RUNTIME_DIR.
#   scripts/with-keyring.sh cargo test --workspace
set -euo pipefail

if [ -z "${CASEBOOK_KEYRING_BUS:-}" ]; then
  exec dbus-run-session -- env CASEBOOK_KEYRING_BUS=1 "$0" "$@"
fi

tmp=$(mktemp -d -t casebook-keyring.XXXXXX)
export XDG_DATA_HOME="$tmp/data" XDG_RUNTIME_DIR="$tmp/run" XDG_CONFIG_HOME="$tmp/config"
mkdir -p "$XDG_DATA_HOME" "$XDG_CONFIG_HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"

# --unlock reads the password from stdin and creates the login keyring with it when
# there is none; its output is the environment a client needs.
eval "$(printf %s casebook-test | gnome-keyring-daemon --unlock --components=secrets)"
export GNOME_KEYRING_CONTROL
cleanup() {
  pkill -u "$(id -u)" -f "gnome-keyring-daemon.*$XDG_RUNTIME_DIR" 2>/dev/null || true
  if [ -n "${GNOME_KEYRING_PID:-}" ]; then kill "$GNOME_KEYRING_PID" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# Wait until the Secret Service answers on the bus.
for _ in $(seq 1 50); do
  if dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets \
      org.freedesktop.DBus.Peer.Ping >/dev/null 2>&1; then
    break
  fi
  sleep 0.1
done

export CASEBOOK_KEYRING_SESSION=1
"$@"
