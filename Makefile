# Casebook. `make run` opens the app; `make test` runs every test. Both install what
# they need on Debian 12 first and are quick when it is already there.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
# One invocation shape everywhere: cargo unifies features per invocation, and mixing
# `-p` with `--workspace` would rebuild the whole Tauri tree.
CARGO_SCOPE := --workspace --all-targets
# What users get: release, only the app and the CLI. Never --workspace here: the e2e
# crate turns on the app's `test-hooks`, which no build users run may have.
RELEASE_SCOPE := --release -p casebook-app -p casebook-sandbox --bins --example bare
# The CLI has a profile of its own (Cargo.toml: release without unwinding), in target/cli/.
CLI_SCOPE := --profile cli -p casebook-cli --bins
# Where cargo builds: CARGO_TARGET_DIR, or target/ (absolute; worked out only when used).
TARGET = $(shell scripts/target-dir.sh)

.PHONY: run test loaded-test harden lint bindings bench bench-window deps-build deps-test deps-package ui ui-deps build release package fresh-install screenshots clean

run: deps-build release
	scripts/run-app.sh

test:
	scripts/test.sh

# The Rust and end-to-end tests as `make test` runs them, with every core held busy by
# a busy loop (scripts/loaded-test.sh): what a loaded CI machine does to timing. Not
# part of `make test`; docs/development.md says when to run it.
loaded-test:
	scripts/loaded-test.sh

deps-build:
	scripts/install-deps.sh build
	$(MAKE) --no-print-directory ui-deps

deps-package: deps-build
	scripts/install-deps.sh package
	scripts/install-tools.sh package

deps-test:
	scripts/install-deps.sh test
	$(MAKE) --no-print-directory ui-deps
	scripts/install-tools.sh

ui-deps:
	@if [ ! -f ui/node_modules/.package-lock.json ] || [ ui/package-lock.json -nt ui/node_modules/.package-lock.json ]; then \
	  cd ui && npm ci --no-audit --no-fund; \
	fi

ui: ui-deps
	cd ui && npm run --silent build

build: ui
	cargo build $(CARGO_SCOPE)

release: ui
	cargo build $(RELEASE_SCOPE)
	cargo build $(CLI_SCOPE)

# The .deb and .rpm (TARGET/release/bundle/{deb,rpm}/, TARGET being CARGO_TARGET_DIR or
# target/): Tauri's bundler packs the release build above (the app, the `casebook` CLI,
# the desktop entry with its MIME types, the icons, the AppStream metainfo) with what
# scripts/package.sh stages (manual pages, completions, copyright, changelog); lintian
# checks the .deb.
package: deps-package release
	scripts/package.sh

# Installs that .deb into a fresh Debian 12: lintian, the manual, a bash completion, a
# .docx opened through its MIME association, then purges it (root, minutes; not part of
# `make test`). sudo drops CARGO_TARGET_DIR, so it is handed over resolved.
fresh-install: package
	sudo CARGO_TARGET_DIR="$(TARGET)" scripts/fresh-install.sh

lint: ui-deps
	cargo fmt --all -- --check
	# Functions: at most 150 lines outside tests (clippy.toml; too_many_lines in each root).
	cargo clippy $(CARGO_SCOPE) -- -D warnings
	# Files: at most 900 non-test lines of Rust, 450 lines of Svelte.
	scripts/check-sizes.py
	# No import cycles between the modules of any crate (core/tests/module_cycles.rs).
	# The same invocation shape as every other cargo call; the filter leaves one test file's.
	cargo test $(CARGO_SCOPE) --quiet -- imports_one_that_imports_it
	cd ui && npm run --silent check

# Reliability figures, about two and a half hours: fuzzing, soak, kill -9 and bad-input tests, then
# one summary line (scripts/harden.sh). Not part of `make test`.
harden: deps-test build
	scripts/harden.sh

# Speed and memory figures, each beside a reference measured in the same run; not part
# of `make test`. Criterion for the SSE decoder and the cite body; `casebook cite` as
# users get it (target/cli/) on a 9 MB document against curl (cli/tests/bench_cite.rs);
# then the real window against a bare Tauri window, at 200 events a second and over
# 50,000 events (tests/e2e/bench.rs).
# The window figures read the test hooks (`window.__casebook*`), which no build users run
# may have: a release build with them, in a target directory of its own so neither shape
# rebuilds the other.
BENCH_SCOPE := --release -p casebook-app --bins --features casebook-app/test-hooks
bench-window: ui
	CARGO_TARGET_DIR=$(TARGET)/bench cargo build $(BENCH_SCOPE)

# The test steps name their test target alone: with --all-targets, criterion's benches
# would be run as well, and they take a single filter.
bench: build release bench-window
	cargo bench --workspace --bench sse --bench cite_body -- --noplot
	CASEBOOK_BENCH_CLI=$(TARGET)/cli/casebook CASEBOOK_BENCH_SANDBOX=$(TARGET)/release/casebook-sandbox \
		cargo test --workspace --test bench_cite -- --ignored --nocapture bench_cite_
	CASEBOOK_BENCH_APP=$(TARGET)/release/casebook-app CASEBOOK_BENCH_BARE=$(TARGET)/release/examples/bare CASEBOOK_BENCH_CLI=$(TARGET)/cli/casebook \
		CASEBOOK_BENCH_WINDOW_APP=$(TARGET)/bench/release/casebook-app \
		CASEBOOK_BENCH_SANDBOX=$(TARGET)/release/casebook-sandbox \
		scripts/with-keyring.sh cargo test --workspace --test e2e -- --ignored --nocapture bench:: bench_many:: bench_history::

# Rewrites ui/src/lib/bindings.ts from the Rust types.
bindings:
	UPDATE_BINDINGS=1 cargo test $(CARGO_SCOPE) -- bindings::tests
	@git --no-pager diff --stat -- ui/src/lib/bindings.ts || true

# Copies the e2e run's screenshots that the README shows into docs/.
screenshots:
	mkdir -p docs/screenshots
	cp artifacts/screenshots/{cite-dropped,cite-result,cite-notes,cite-rate-limited,settings,mission-conversation,mission-report,mission-question,mission-live,mission-cancelled,missions-history,review-copy}.png docs/screenshots/

clean:
	cargo clean
	rm -rf ui/dist artifacts
