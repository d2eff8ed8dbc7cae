#!/usr/bin/env bash
# Tools the tests need beyond Debian packages, installed once.
set -euo pipefail
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
