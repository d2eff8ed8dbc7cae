#!/usr/bin/env bash
# Tools beyond Debian packages, installed once.
#   scripts/install-tools.sh          # what the tests need
#   scripts/install-tools.sh package  # what `make package` needs
set -euo pipefail
if [ "${1:-test}" = package ]; then
  # cargo-about reads the licences of every crate the programs link, for the
  # package's copyright file (scripts/copyright.sh). About 4 minutes to build on two
  # cores, once; its `cli` feature is the command itself.
  if ! command -v cargo-about >/dev/null 2>&1 && [ ! -x "$HOME/.cargo/bin/cargo-about" ]; then
    echo "install-tools: cargo install cargo-about" >&2
    cargo install cargo-about --version 0.9.3 --features cli --locked --quiet
  fi
  exit 0
fi
if ! command -v tauri-driver >/dev/null 2>&1 && [ ! -x "$HOME/.cargo/bin/tauri-driver" ]; then
  echo "install-tools: cargo install tauri-driver" >&2
  cargo install tauri-driver --locked --quiet
fi
# python-docx and python-pptx, which check the documents Casebook writes, in a venv
# of Debian's python3 (the one python3-gi also belongs to).
venv=.venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import docx, pptx' 2>/dev/null; then
  echo "install-tools: python-docx and python-pptx into $venv" >&2
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check 'python-docx==1.2.0' 'python-pptx==1.0.2'
fi
# The real eve servers the tests run against: every release pinned in tests/eve-agent*/
# (1.0.1 and the older 0.80.1, 0.64.1, 0.30.8), each `npm ci` from its own lockfile and
# `eve build` into a cache outside the checkout (scripts/eve-server.sh). About a second
# when nothing changed; a minute or two from nothing.
"$(dirname "$0")/eve-server.sh" install-all
