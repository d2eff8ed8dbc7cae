#!/usr/bin/env bash
# Packs the release build (`make release`) into a .deb with Tauri's bundler. npm's
# @tauri-apps/cli ships the bundler prebuilt and makes a .deb offline; it is run
# through npx, not kept in ui/package.json, whose lockfile would lose its optional
# platform packages. `tauri bundle` packs what cargo built instead of building again.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
for b in release/casebook-app cli/casebook; do
  [ -x "$target/$b" ] || { echo "package: $target/$b is missing; run make release" >&2; exit 2; }
done
rm -f "$target"/release/bundle/deb/*.deb
(cd src-tauri && npx --yes @tauri-apps/cli@~2.12.5 bundle --bundles deb)
deb=$(ls "$target"/release/bundle/deb/*.deb)
echo "package: $deb"
dpkg-deb --field "$deb" Package Version Architecture Depends Recommends
