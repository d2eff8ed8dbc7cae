#!/usr/bin/env bash
# Hardening figures (`make harden`; about two and a half hours, so not part of `make
# test`): every fuzz target for HARDEN_FUZZ_MINUTES (10) minutes, the soak tests (100
# injected disconnects; 10,000 events in the real window), the kill -9 crash tests (the
# CLI's watch and the app, 20 kills each, against the real eve 1.0.1 too) and the
# bad-input table, then one summary line. Fails when any part fails.
#
#   scripts/harden.sh                 every part, then the summary
#   scripts/harden.sh fuzz [TARGET…]  only the fuzzing (all targets by default)
#   scripts/harden.sh soak|crash|bad-input|summary
#
# Each part leaves its figures in artifacts/harden/*.env; `summary` reads them, so parts
# run separately still add up to one line.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/artifacts/harden
FUZZ=$ROOT/src-tauri/fuzz
MINUTES=${HARDEN_FUZZ_MINUTES:-10}
TARGETS=(sse ndjson eve_lines facts sniff reader returned_package report_docx parse_answer cite_answer sandbox_request mission_message)
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
mkdir -p "$OUT"

# The fuzzer runs niced on one job: people build on this machine at the same time.
fuzz_cargo() { (cd "$FUZZ" && RUSTC_BOOTSTRAP=1 nice -n 19 cargo fuzz "$@"); }

# Seed corpora from the fixtures and the SSE vectors; libFuzzer adds what it finds to
# corpus/TARGET (git-ignored), the committed seeds/ stay as they are.
seed_corpora() {
  local c=$FUZZ/corpus
  mkdir -p "${TARGETS[@]/#/$c/}" "${TARGETS[@]/#/$FUZZ/seeds/}"
  for t in sniff reader; do
    cp -n tests/data/docx/*.docx tests/data/pptx/*.pptx tests/data/bad/* "$c/$t/"
  done
  # returned_package's first byte picks the inflation bound (0: the real one).
  for f in tests/data/docx/*.docx tests/data/pptx/*.pptx tests/data/bad/*; do
    for pick in 0 3; do
      [ -e "$c/returned_package/$pick-${f##*/}" ] ||
        { printf "\\$(printf %o "$pick")"; cat "$f"; } >"$c/returned_package/$pick-${f##*/}"
    done
  done
  python3 - "$c" tests/data/sse/vectors.json tests/data/docx/comments-ins-del-lorem.docx <<'EOF'
import base64, json, pathlib, sys
corpus, vectors, docx = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
for i, v in enumerate(json.load(open(vectors))):
    raw = bytes.fromhex(v["inputHex"]) if "inputHex" in v else v["input"].encode()
    # The sse target's first byte picks the limit (even: none), the next 8 the chunking.
    for sel in (0, 2 * 8 + 1):
        (corpus / "sse" / f"vector-{i:03}-{sel}").write_bytes(bytes([sel]) + (i + 1).to_bytes(8, "little") + raw)
    # NDJSON gets each vector's bytes too: lines of all sorts, none of them JSON.
    (corpus / "ndjson" / f"vector-{i:03}").write_bytes((i + 1).to_bytes(8, "little") + raw)
# eve's recorded streams, each generation, whole: first byte picks the generation.
for name in ("gen-a", "gen-b", "gen-27"):
    raw = (pathlib.Path("src-tauri/core/tests/data/eve") / f"{name}.ndjson").read_bytes()
    pick = 0 if name == "gen-27" else 1
    (corpus / "eve_lines" / f"{name}").write_bytes(bytes([pick]) + (7).to_bytes(8, "little") + raw)
doc = base64.b64encode(open(docx, "rb").read()).decode()
for mode in ("every", "every_other", "random"):
    (corpus / "sandbox_request" / f"docx-{mode}.json").write_text(
        json.dumps({"fileBase64": doc, "mode": mode, "minCitations": 1, "maxCitations": 4}))
EOF
}

part_fuzz() {
  command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
  local targets=("$@")
  [ ${#targets[@]} -gt 0 ] || targets=("${TARGETS[@]}")
  seed_corpora
  # The app's versions of every dependency, not whatever is newest today.
  [ -f "$FUZZ/Cargo.lock" ] || cp Cargo.lock "$FUZZ/Cargo.lock"
  fuzz_cargo build
  local failed=0
  for t in "${targets[@]}"; do
    local dir=$OUT/fuzz/$t
    rm -rf "$dir" "$FUZZ/artifacts/$t"
    mkdir -p "$dir" "$FUZZ/artifacts/$t"
    local secs=${HARDEN_FUZZ_SECONDS:-$((MINUTES * 60))}
    echo "=== fuzz $t: $secs s"
    local rc=0
    # -jobs=1 runs the fuzzer in a child whose log is fuzz-0.log in the working folder.
    (cd "$dir" && RUSTC_BOOTSTRAP=1 nice -n 19 cargo fuzz run --fuzz-dir "$FUZZ" "$t" \
      "$FUZZ/corpus/$t" "$FUZZ/seeds/$t" -- \
      -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -jobs=1 \
      -print_final_stats=1 >run.log 2>&1) || rc=$?
    local log=$dir/fuzz-0.log
    [ -f "$log" ] || log=$dir/run.log
    local last runs cov ft pcs crashes timeouts
    last=$(grep -aE '^#[0-9]+' "$log" | tail -1 || true)
    runs=$(sed -nE 's/^#([0-9]+).*/\1/p' <<<"$last")
    cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")
    ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$last")
    pcs=$(sed -nE 's/.*Loaded [0-9]+ PC tables \(([0-9]+) PCs\).*/\1/p' "$log" | head -1)
    crashes=$(find "$FUZZ/artifacts/$t" -name 'crash-*' -o -name 'oom-*' -o -name 'leak-*' | wc -l)
    timeouts=$(find "$FUZZ/artifacts/$t" -name 'timeout-*' -o -name 'slow-unit-*' | wc -l)
    cp -r "$FUZZ/artifacts/$t" "$dir/artifacts"
    grep -qw 'DONE' <<<"$last" || { [ "$crashes$timeouts" != 00 ] || crashes=$((crashes + 1)); }
    cat >"$dir/result.env" <<EOF
target=$t
seconds=$secs
runs=${runs:-0}
cov=${cov:-0}
ft=${ft:-0}
pcs=${pcs:-0}
crashes=$crashes
timeouts=$timeouts
rc=$rc
EOF
    printf 'fuzz %-16s %5s s  runs %-10s cov %-6s ft %-6s (of %s PCs)  crashes %s  timeouts %s\n' \
      "$t" "$secs" "${runs:-0}" "${cov:-0}" "${ft:-0}" "${pcs:-?}" "$crashes" "$timeouts" | tee "$dir/line.txt"
    if [ "$crashes" != 0 ] || [ "$timeouts" != 0 ] || [ $rc != 0 ]; then
      echo "fuzz $t failed (exit $rc); inputs in $dir/artifacts" >&2
      failed=1
    fi
  done
  return $failed
}

# Runs ignored tests and keeps their output, which carries the figures.
run_ignored() {
  local log=$1; shift
  # One test at a time (RUST_TEST_THREADS: criterion's benches refuse --test-threads), so
  # the kills and reconnects do not race each other for the CPU.
  RUST_TEST_THREADS=1 scripts/with-keyring.sh cargo test --workspace --all-targets "$@" -- \
    --ignored --nocapture 2>&1 | tee "$log"
  return "${PIPESTATUS[0]}"
}

part_soak() {
  local rc=0
  run_ignored "$OUT/soak.log" soak_ || rc=$?
  local drops
  drops=$(grep -aoE 'soak: [0-9]+ drops' "$OUT/soak.log" | awk '{s += $2} END {print s + 0}')
  grep -aq 'soak window: 10000 events' "$OUT/soak.log" || rc=1
  echo "drops=$drops" >"$OUT/soak.env"
  echo "rc=$rc" >>"$OUT/soak.env"
  return $rc
}

part_crash() {
  local rc=0
  run_ignored "$OUT/crash.log" crash_ || rc=$?
  local kills
  kills=$(grep -aoE 'crash: [0-9]+ kills' "$OUT/crash.log" | awk '{s += $2} END {print s + 0}')
  echo "kills=$kills" >"$OUT/crash.env"
  echo "rc=$rc" >>"$OUT/crash.env"
  return $rc
}

part_bad_input() {
  local rc=0
  # The CLI's table, and the app-flow case that needs core (a file deleted after its drop).
  # (One filter each: criterion's benches, also run by --all-targets, take only one.)
  : >"$OUT/bad-input.log"
  for t in bad_inputs_fail_cleanly deleted_between_drop_and_cite; do
    scripts/with-keyring.sh cargo test --workspace --all-targets "$t" -- --nocapture 2>&1 \
      | tee -a "$OUT/bad-input.log"
    [ "${PIPESTATUS[0]}" = 0 ] || rc=1
  done
  local bad
  bad=$(grep -aoE 'bad inputs: [0-9]+/[0-9]+' "$OUT/bad-input.log" \
    | awk -F'[ /]' '{ok += $3; all += $4} END {if (all) print ok "/" all}')
  [ -n "$bad" ] || rc=1
  echo "bad=$bad" >"$OUT/bad-input.env"
  echo "rc=$rc" >>"$OUT/bad-input.env"
  return $rc
}

part_summary() {
  local n=0 seconds='' crashes=0 failed=0
  for t in "${TARGETS[@]}"; do
    local f=$OUT/fuzz/$t/result.env
    if [ ! -f "$f" ]; then echo "harden: no fuzz figures for $t" >&2; failed=1; continue; fi
    # shellcheck disable=SC1090
    (. "$f"; cat "$OUT/fuzz/$t/line.txt")
    local c s
    c=$(. "$f"; echo $((crashes + timeouts)))
    # Figures from before `seconds` was recorded give minutes.
    s=$(. "$f"; echo "${seconds:-$((minutes * 60))}")
    n=$((n + 1)); crashes=$((crashes + c))
    # The line reports the shortest run, so no target is claimed longer than it ran.
    if [ -z "$seconds" ] || [ "$s" -lt "$seconds" ]; then seconds=$s; fi
    [ "$c" = 0 ] || failed=1
  done
  local drops=? kills=? bad=?
  for p in soak crash bad-input; do
    if [ -f "$OUT/$p.env" ]; then
      # shellcheck disable=SC1090
      [ "$(. "$OUT/$p.env"; echo "$rc")" = 0 ] || failed=1
    else
      echo "harden: no figures for $p" >&2; failed=1
    fi
  done
  [ -f "$OUT/soak.env" ] && drops=$(. "$OUT/soak.env"; echo "$drops")
  [ -f "$OUT/crash.env" ] && kills=$(. "$OUT/crash.env"; echo "$kills")
  [ -f "$OUT/bad-input.env" ] && bad=$(. "$OUT/bad-input.env"; echo "$bad")
  local minutes
  minutes=$(awk -v s="${seconds:-0}" 'BEGIN {printf "%g", s / 60}')
  local line="harden: fuzz $n targets × $minutes min, $crashes crashes; soak $drops drops, 0 lost, 0 repeated; crash $kills kills, 0 losses; bad inputs $bad"
  echo "$line" | tee "$OUT/summary.txt"
  return $failed
}

parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(all)
case ${parts[0]} in
  all)
    rc=0
    part_fuzz || rc=1
    part_soak || rc=1
    part_crash || rc=1
    part_bad_input || rc=1
    part_summary || rc=1
    exit $rc ;;
  fuzz) part_fuzz "${parts[@]:1}" ;;
  soak) part_soak ;;
  crash) part_crash ;;
  bad-input) part_bad_input ;;
  summary) part_summary ;;
  *) echo "usage: $0 [all|fuzz [TARGET…]|soak|crash|bad-input|summary]" >&2; exit 2 ;;
esac
