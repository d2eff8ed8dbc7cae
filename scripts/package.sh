#!/usr/bin/env bash
# Packs the release build (`make release`) into a .deb and an .rpm with Tauri's
# bundler. npm's @tauri-apps/cli ships the bundler prebuilt and makes both offline; it
# is run through npx, not kept in ui/package.json, whose lockfile would lose its
# optional platform packages. `tauri bundle` packs what cargo built instead of
# building again.
#
# What only exists once built is staged under TARGET/package/ and handed to the
# bundler in a config overlay (`--config`, merged into tauri.conf.json), so any
# CARGO_TARGET_DIR and any working directory work: the `casebook` CLI, its manual
# pages and shell completions (written by that very binary from its own definition),
# the copyright file (cargo-about, scripts/copyright.sh), the changelog, and the
# app's manual page, all compressed as Debian policy says (gzip -9n).
set -euo pipefail
umask 022
cd "$(dirname "$0")/.."
target=$(scripts/target-dir.sh)
# The bundler, run in src-tauri/, looks for the app there and puts the bundles there.
export CARGO_TARGET_DIR=$target
app=$target/release/casebook-app
cli=$target/cli/casebook
for b in "$app" "$cli"; do
  [ -x "$b" ] || { echo "package: $b is missing; run make release" >&2; exit 2; }
done

stage=$target/package
rm -rf "$stage"
mkdir -p "$stage/man"
"$cli" __package-assets "$stage/assets"
for page in "$stage"/assets/man/*.1 src-tauri/linux/casebook-app.1; do
  gzip -9n < "$page" > "$stage/man/$(basename "$page").gz"
done
gzip -9n < src-tauri/linux/changelog > "$stage/changelog.gz"
# cargo-about takes minutes: the copyright file is made again only when what it is
# made from changes (the dependency graphs, the UI's packages, these scripts).
key=$(cat Cargo.lock ui/package-lock.json Cargo.toml src-tauri/Cargo.toml src-tauri/*/Cargo.toml \
  src-tauri/linux/about.toml scripts/copyright.sh scripts/dep5-copyright.mjs | sha256sum | cut -c1-16)
made=$target/package-cache/copyright-$key
if [ ! -s "$made" ]; then
  mkdir -p "$(dirname "$made")"
  scripts/copyright.sh "$made.new"
  mv "$made.new" "$made"
fi
cp "$made" "$stage/copyright"

# Installed path → staged file, for both formats. Fedora's zsh looks in site-functions.
{
  printf '%s\t%s\n' /usr/bin/casebook "$cli"
  for page in "$stage"/man/*.gz; do
    printf '%s\t%s\n' "/usr/share/man/man1/$(basename "$page")" "$page"
  done
  printf '%s\t%s\n' /usr/share/doc/casebook/copyright "$stage/copyright"
  printf '%s\t%s\n' /usr/share/doc/casebook/changelog.gz "$stage/changelog.gz"
  for f in bash-completion/completions/casebook fish/vendor_completions.d/casebook.fish; do
    printf '%s\t%s\n' "/usr/share/$f" "$stage/assets/usr/share/$f"
  done
} > "$stage/files.tsv"
node - "$stage/files.tsv" "$stage/assets/usr/share/zsh/vendor-completions/_casebook" > "$stage/tauri.package.json" <<'JS'
const fs = require("node:fs");
const [tsv, zsh] = process.argv.slice(2);
const files = Object.fromEntries(
  fs.readFileSync(tsv, "utf8").trim().split("\n").map((l) => l.split("\t")));
const deb = { ...files, "/usr/share/zsh/vendor-completions/_casebook": zsh };
const rpm = { ...files, "/usr/share/zsh/site-functions/_casebook": zsh };
console.log(JSON.stringify({ bundle: { linux: { deb: { files: deb }, rpm: { files: rpm } } } }, null, 2));
JS

rm -f "$target"/release/bundle/deb/*.deb "$target"/release/bundle/rpm/*.rpm
(cd src-tauri && npx --yes @tauri-apps/cli@~2.12.5 bundle --bundles deb,rpm --config "$stage/tauri.package.json")
deb=$(ls "$target"/release/bundle/deb/*.deb)
rpm=$(ls "$target"/release/bundle/rpm/*.rpm)
echo "package: $deb"
dpkg-deb --field "$deb" Package Version Architecture Maintainer Depends Recommends
echo "package: $rpm"
if command -v rpm >/dev/null; then
  rpm -qp --qf 'Name: %{NAME}\nVersion: %{VERSION}-%{RELEASE}\nLicense: %{LICENSE}\n' "$rpm"
  rpm -qpR "$rpm" | sed 's/^/Requires: /'
fi
# Debian's own checks: no error and no warning, with no override.
if command -v lintian >/dev/null; then
  echo "=== lintian $(basename "$deb")"
  lintian --fail-on error,warning --display-info "$deb" \
    || { echo "package: lintian found errors or warnings in $deb" >&2; exit 1; }
  echo "lintian: clean (0 errors, 0 warnings)"
fi
