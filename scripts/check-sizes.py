#!/usr/bin/env python3
"""Sizes that keep the code readable, checked by `make lint` so they keep holding.

- No non-test Rust file over 900 lines (a `#[cfg(test)]` item, a `tests.rs` or a file
  under `tests/` or `benches/` does not count).
- No Svelte component over 450 lines.
- No non-test function over 150 lines is clippy's (`clippy.toml`), in the same `make lint`.

Prints each file over its limit and exits 1, or prints nothing.
"""
import os
import re
import sys

RUST_MAX = 900
SVELTE_MAX = 450
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
RUST_DIRS = ["src-tauri/core/src", "src-tauri/sandbox/src", "src-tauri/cli/src", "src-tauri/src",
             "src-tauri/testsupport/src"]


def non_test_lines(text):
    """Lines outside `#[cfg(test)]` items (a block's braces counted, strings ignored)."""
    lines = text.split("\n")
    count, i = 0, 0
    while i < len(lines):
        if re.match(r"\s*#\[cfg\(test\)\]", lines[i]):
            depth, opened = 0, False
            i += 1
            while i < len(lines):
                code = re.sub(r'"(\\.|[^"\\])*"', '""', lines[i].split("//")[0])
                depth += code.count("{") - code.count("}")
                opened = opened or "{" in code
                i += 1
                if (opened and depth <= 0) or (not opened and code.rstrip().endswith(";")):
                    break
            continue
        count += 1
        i += 1
    return count


def main():
    over = []
    for top in RUST_DIRS:
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            if os.path.basename(d) in ("tests", "benches"):
                continue
            for f in files:
                if not f.endswith(".rs") or f == "tests.rs":
                    continue
                path = os.path.join(d, f)
                with open(path, encoding="utf-8") as fh:
                    n = non_test_lines(fh.read())
                if n > RUST_MAX:
                    over.append(f"{os.path.relpath(path, ROOT)}: {n} non-test lines (at most {RUST_MAX})")
    for d, _, files in os.walk(os.path.join(ROOT, "ui/src")):
        for f in files:
            if f.endswith(".svelte"):
                path = os.path.join(d, f)
                with open(path, encoding="utf-8") as fh:
                    n = fh.read().count("\n")
                if n > SVELTE_MAX:
                    over.append(f"{os.path.relpath(path, ROOT)}: {n} lines (at most {SVELTE_MAX})")
    for line in over:
        print(f"too long: {line}; split it by what its parts do", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
