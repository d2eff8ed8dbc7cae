#!/usr/bin/env bash
# Runs `make test` from a fresh clone inside a fresh Debian 12 (debootstrap), with only
# this machine's Rust toolchain and Node.js added: the check that the install scripts
# really install everything. Needs root (chroot, bind mounts) and debootstrap.
#   sudo scripts/fresh-debian.sh [ROOT]     # ROOT defaults to ../fresh-debian
# Delete ROOT afterwards only with `rm -rf --one-file-system`.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
R=$(realpath -m "${1:-$src/../fresh-debian}")
[ "$(id -u)" -eq 0 ] || { echo "fresh-debian: run as root (chroot and mounts)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "fresh-debian: apt-get install debootstrap" >&2; exit 2; }

# The mirror this machine already uses, so no address is written here.
mirror=$(grep -hoE '(URIs:|deb) +https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list.d/* /etc/apt/sources.list 2>/dev/null \
  | head -1 | awk '{print $2}' || true)
[ -n "$mirror" ] || { echo "fresh-debian: no Debian mirror found in /etc/apt" >&2; exit 2; }
if [ ! -x "$R/bin/bash" ]; then
  debootstrap --include=ca-certificates,git,make,gcc,libc6-dev bookworm "$R" "$mirror"
fi

# Daemons the tests started inside (D-Bus, gnome-keyring) keep mounts busy: stop
# every process whose root is the chroot first. A mount left behind would make
# deleting the root delete the host's /dev, so say so loudly.
cleanup() {
  for p in /proc/[0-9]*; do
    if [ "$(readlink "$p/root" 2>/dev/null)" = "$R" ]; then kill -9 "${p#/proc/}" 2>/dev/null || true; fi
  done
  sleep 1
  for m in work/shared root/.cargo/registry root/.rustup tmp dev/shm dev/pts dev sys proc; do
    if mountpoint -q "$R/$m"; then umount "$R/$m" 2>/dev/null || umount -l "$R/$m" || true; fi
  done
  if grep -q " $R/" /proc/mounts; then
    echo "fresh-debian: still mounted under $R; unmount these before deleting it:" >&2
    grep " $R/" /proc/mounts >&2
  fi
  return 0
}
trap cleanup EXIT
cp /etc/resolv.conf "$R/etc/resolv.conf"
cp -a /etc/apt/sources.list.d/. "$R/etc/apt/sources.list.d/"
rm -f "$R/etc/apt/sources.list"
# Site CAs and npm settings of this network, when it has them.
if compgen -G "/usr/local/share/ca-certificates/*" >/dev/null; then
  cp /usr/local/share/ca-certificates/* "$R/usr/local/share/ca-certificates/"
  chroot "$R" update-ca-certificates >/dev/null
fi
[ -f "$HOME/.npmrc" ] && cp "$HOME/.npmrc" "$R/root/.npmrc"
[ -f /etc/pip.conf ] && cp /etc/pip.conf "$R/etc/pip.conf"

for m in proc sys dev dev/pts; do mkdir -p "$R/$m"; mountpoint -q "$R/$m" || mount --bind "/$m" "$R/$m"; done
mkdir -p "$R/dev/shm"; mountpoint -q "$R/dev/shm" || mount -t tmpfs tmpfs "$R/dev/shm"
mountpoint -q "$R/tmp" || mount -t tmpfs -o size=8g tmpfs "$R/tmp"

# Node.js: the binary and its global modules (npm).
cp -a "$(command -v node)" "$R/usr/bin/node"
rm -rf "$R/usr/lib/node_modules"; cp -a /usr/lib/node_modules "$R/usr/lib/"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$R/usr/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$R/usr/bin/npx"
# Rust: the toolchains read-only, the crate download cache shared; no installed tools.
mkdir -p "$R/root/.rustup" "$R/root/.cargo/bin" "$R/root/.cargo/registry"
mountpoint -q "$R/root/.rustup" || mount --bind -o ro "$HOME/.rustup" "$R/root/.rustup"
mountpoint -q "$R/root/.cargo/registry" || mount --bind "$HOME/.cargo/registry" "$R/root/.cargo/registry"
for b in cargo rustc rustup cargo-clippy cargo-fmt clippy-driver rustfmt rustdoc; do
  cp -a "$HOME/.cargo/bin/$b" "$R/root/.cargo/bin/"
done

# The clone and the shared fixtures beside it, as in CI.
mkdir -p "$R/work/shared"
mountpoint -q "$R/work/shared" || mount --bind -o ro "$src/../shared" "$R/work/shared"
rm -rf "$R/work/main"; git clone -q "$src" "$R/work/main"

pass=()
for v in NODE_EXTRA_CA_CERTS SSL_CERT_FILE SSL_CERT_DIR CURL_CA_BUNDLE PIP_CERT REQUESTS_CA_BUNDLE GIT_SSL_CAINFO; do
  [ -n "${!v:-}" ] && pass+=("$v=${!v}")
done
chroot "$R" env -i HOME=/root TERM=dumb CI=true "${pass[@]}" \
  PATH=/root/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  bash -c 'cd /work/main && time make test' </dev/null
