#!/usr/bin/env bash
# Tools the tests need beyond Debian packages, installed once.
set -euo pipefail
if ! command -v tauri-driver >/dev/null 2>&1 && [ ! -x "$HOME/.cargo/bin/tauri-driver" ]; then
  echo "install-tools: cargo install tauri-driver" >&2
  cargo install tauri-driver --locked --quiet
fi
