#!/usr/bin/env bash
# Writes the package's copyright file (machine-readable, DEP-5) to $1: Casebook's own
# paragraph, then every crate linked into casebook-app and casebook with the licence
# cargo-about finds for it in the dependency graph (src-tauri/linux/about.toml), and
# every npm package the web UI's bundle holds (its source map names them), laid out by
# scripts/dep5-copyright.mjs. Offline: cargo and npm have fetched everything by then.
#   scripts/copyright.sh OUT
set -euo pipefail
out=$(realpath -m "$1")
cd "$(dirname "$0")/.."
command -v cargo-about >/dev/null || { echo "copyright: cargo-about is missing (scripts/install-tools.sh package)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# cargo-about reads every platform's manifests (cargo metadata), not only Linux's.
cargo fetch --locked --quiet
# One run per program (about a minute and a half of CPU each), side by side.
pids=()
for manifest in src-tauri/Cargo.toml src-tauri/cli/Cargo.toml; do
  name=$(basename "$(dirname "$manifest")")
  cargo about generate --format json --frozen --fail -c src-tauri/linux/about.toml \
    -m "$manifest" -o "$work/$name.json" 2>"$work/$name.log" &
  pids+=($!)
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { cat "$work"/*.log >&2; exit 1; }
done

# The UI as `make ui` builds it, with a source map on the side: each module's path says
# which package it came from; each package's own license file says the rest.
(cd ui && npx vite build --sourcemap --outDir "$work/ui" --emptyOutDir --logLevel error)
node - "$work/ui" > "$work/npm.json" <<'JS'
const fs = require("node:fs");
const path = require("node:path");
const dir = path.join(process.argv[2], "assets");
const names = new Set();
for (const f of fs.readdirSync(dir).filter((f) => f.endsWith(".map"))) {
  for (const src of JSON.parse(fs.readFileSync(path.join(dir, f), "utf8")).sources) {
    const at = src.lastIndexOf("node_modules/");
    if (at < 0) continue;
    const parts = src.slice(at + "node_modules/".length).split("/");
    names.add(parts[0].startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]);
  }
}
const out = [...names].sort().map((name) => {
  const root = path.join("ui/node_modules", name);
  const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
  // LICENSE, or with a choice (LICENSE-MIT, LICENSE-APACHE-2.0) the MIT one, which
  // dep5-copyright.mjs lists for such packages.
  const files = fs.readdirSync(root).filter((f) => /^(licen[cs]e|copying)/i.test(f));
  const file = files.find((f) => /mit/i.test(f)) ?? files[0];
  const text = file ? fs.readFileSync(path.join(root, file), "utf8") : "";
  const authors = pkg.author ? [typeof pkg.author === "string" ? pkg.author : pkg.author.name] : [];
  return { name, version: pkg.version, license: pkg.license, text, authors };
});
console.log(JSON.stringify(out, null, 1));
JS
node scripts/dep5-copyright.mjs "$work"/src-tauri.json "$work"/cli.json "$work"/npm.json > "$out"
