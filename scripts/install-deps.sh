#!/usr/bin/env bash
# Installs the Debian packages Casebook needs, once. Idempotent: packages that dpkg
# already knows are skipped, so a second run costs a few dpkg queries.
#   scripts/install-deps.sh build   # what `make run` needs
#   scripts/install-deps.sh test    # build + what `make test` needs
#   scripts/install-deps.sh package # build + what `make package` checks the packages with
set -euo pipefail

profile="${1:-build}"

build_pkgs=(
  build-essential pkg-config curl file
  libwebkit2gtk-4.1-dev libgtk-3-dev libxdo-dev librsvg2-dev libayatana-appindicator3-dev
  # Without a display `make run` runs the app on its own Xvfb (scripts/run-app.sh) and
  # prints how to take a screenshot of it with imagemagick's `import`.
  xvfb xauth imagemagick
)
test_pkgs=(
  xvfb xauth webkit2gtk-driver xdotool
  python3 python3-gi gir1.2-gtk-3.0 python3-venv
  dbus dbus-x11 gnome-keyring libsecret-tools
  libreoffice-writer-nogui libreoffice-impress-nogui
  imagemagick
  desktop-file-utils
  # The package's configuration checks: its AppStream metainfo, its manual pages.
  appstream man-db
)
package_pkgs=(
  lintian rpm
)

case "$profile" in
  build) want=("${build_pkgs[@]}") ;;
  test) want=("${build_pkgs[@]}" "${test_pkgs[@]}") ;;
  package) want=("${build_pkgs[@]}" "${package_pkgs[@]}") ;;
  *) echo "usage: $0 build|test|package" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
  if ! dpkg -s "$p" >/dev/null 2>&1; then
    missing+=("$p")
  fi
done
# dedupe while keeping order
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | awk '!seen[$0]++')

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi

echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
