#!/usr/bin/env bash
# Installs the built .deb (`make package`) into a fresh Debian 12 (debootstrap) as a
# user would, with apt, and checks it there: lintian finds nothing to say about it (no
# error, no warning), `man` finds the manual, bash completes `casebook mission <TAB>`,
# the AppStream metainfo validates; the installed app starts under Xvfb with
# a WebDriver session, a .docx opened through its MIME association (`gio open`, the
# installed desktop entry) arrives as a card in that window, `casebook --version`
# answers, and `apt purge` leaves none of the package's files. Root (chroot, mounts).
#   sudo scripts/fresh-install.sh [ROOT]     # ROOT defaults to ../fresh-install
# Delete ROOT afterwards only with `rm -rf --one-file-system`.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
R=$(realpath -m "${1:-$src/../fresh-install}")
[ "$(id -u)" -eq 0 ] || { echo "fresh-install: run as root (chroot and mounts)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "fresh-install: apt-get install debootstrap" >&2; exit 2; }
deb=$(ls -t "${CARGO_TARGET_DIR:-$src/target}"/release/bundle/deb/*.deb 2>/dev/null | head -1 || true)
[ -n "$deb" ] || { echo "fresh-install: no .deb; run make package" >&2; exit 2; }
driver=$(command -v tauri-driver || echo "$HOME/.cargo/bin/tauri-driver")
[ -x "$driver" ] || { echo "fresh-install: tauri-driver is missing (make deps-test installs it)" >&2; exit 2; }

# The mirror this machine already uses, so no address is written here.
mirror=$(grep -hoE '(URIs:|deb) +https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list.d/* /etc/apt/sources.list 2>/dev/null \
  | head -1 | awk '{print $2}' || true)
[ -n "$mirror" ] || { echo "fresh-install: no Debian mirror found in /etc/apt" >&2; exit 2; }
if [ ! -x "$R/bin/bash" ]; then
  debootstrap --include=ca-certificates bookworm "$R" "$mirror"
fi

# As in fresh-debian.sh: stop every process whose root is the chroot (Xvfb, D-Bus, the
# app), then unmount; a mount left behind would make deleting the root delete the
# host's /dev, so say so loudly.
cleanup() {
  for p in /proc/[0-9]*; do
    if [ "$(readlink "$p/root" 2>/dev/null)" = "$R" ]; then kill -9 "${p#/proc/}" 2>/dev/null || true; fi
  done
  sleep 1
  for m in tmp dev/shm dev/pts dev sys proc; do
    if mountpoint -q "$R/$m"; then umount "$R/$m" 2>/dev/null || umount -l "$R/$m" || true; fi
  done
  if grep -q " $R/" /proc/mounts; then
    echo "fresh-install: still mounted under $R; unmount these before deleting it:" >&2
    grep " $R/" /proc/mounts >&2
  fi
  return 0
}
trap cleanup EXIT
cp /etc/resolv.conf "$R/etc/resolv.conf"
cp -a /etc/apt/sources.list.d/. "$R/etc/apt/sources.list.d/"
rm -f "$R/etc/apt/sources.list"
if compgen -G "/usr/local/share/ca-certificates/*" >/dev/null; then
  cp /usr/local/share/ca-certificates/* "$R/usr/local/share/ca-certificates/"
  chroot "$R" update-ca-certificates >/dev/null
fi

for m in proc sys dev dev/pts; do mkdir -p "$R/$m"; mountpoint -q "$R/$m" || mount --bind "/$m" "$R/$m"; done
mkdir -p "$R/dev/shm"; mountpoint -q "$R/dev/shm" || mount -t tmpfs tmpfs "$R/dev/shm"
mountpoint -q "$R/tmp" || mount -t tmpfs -o size=2g tmpfs "$R/tmp"

# What the check needs beside the package: a display, D-Bus, the opener and the
# WebDriver pieces (tauri-driver is not in Debian: this machine's copy).
cp "$deb" "$R/tmp/"
cp "$driver" "$R/usr/local/bin/tauri-driver"
mkdir -p "$R/root/Documents"
cp "$src/tests/data/docx/headings-lorem-multirun.docx" "$R/root/Documents/Report draft.docx"

in_root() {
  chroot "$R" env -i HOME=/root TERM=dumb LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive CASEBOOK_LOG="${CASEBOOK_LOG:-info}" \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}
in_root apt-get update -q
in_root apt-get install -y -q --no-install-recommends \
  xvfb xauth dbus dbus-x11 webkit2gtk-driver libglib2.0-bin xdg-utils desktop-file-utils \
  shared-mime-info python3 lintian man-db bash-completion appstream >/dev/null
echo "=== apt install ./$(basename "$deb")"
in_root bash -c "cd /tmp && apt-get install -y ./$(basename "$deb")"
pkg=$(dpkg-deb --field "$deb" Package)
echo "=== $pkg: Depends: $(in_root dpkg-query -W -f='${Depends}' "$pkg")"
in_root dpkg -L "$pkg" > "$R/tmp/files.txt"

echo "=== lintian $(basename "$deb")"
in_root lintian --fail-on error,warning --display-info "/tmp/$(basename "$deb")"
echo "lintian: clean (0 errors, 0 warnings)"

in_root bash -s <<'CHECK'
set -euo pipefail
echo "=== man -w casebook: $(man -w casebook)"
for page in casebook-app casebook-mission-start; do echo "man -w $page: $(man -w "$page")"; done
man casebook 2>/dev/null | grep -q 'casebook-mission(1)' && echo "man casebook lists casebook-mission(1)"
echo "=== bash: casebook mission <TAB>"
got=$(bash --norc --noprofile -c '
  source /usr/share/bash-completion/bash_completion
  __load_completion casebook
  COMP_WORDS=(casebook mission ""); COMP_CWORD=2; COMP_LINE="casebook mission "; COMP_POINT=${#COMP_LINE}
  "$(complete -p casebook | sed -E "s/.*-F ([^ ]+).*/\1/")" casebook "" mission
  printf "%s\n" "${COMPREPLY[@]}"' | sort | tr '\n' ' ')
echo "$got"
for sub in start watch list export cancel; do
  [[ " $got " == *" $sub "* ]] || { echo "fresh-install: no '$sub' in the completion" >&2; exit 1; }
done
echo "=== appstreamcli validate"
appstreamcli validate --no-net /usr/share/metainfo/app.casebook.desktop.metainfo.xml
echo "=== the installed desktop entry"
desktop-file-validate /usr/share/applications/Casebook.desktop && echo "Casebook.desktop is valid"
grep -E '^(Exec|MimeType)=' /usr/share/applications/Casebook.desktop
default=$(xdg-mime query default application/vnd.openxmlformats-officedocument.wordprocessingml.document)
echo "xdg-mime: .docx opens with $default"
[ "$default" = Casebook.desktop ]
echo "=== casebook --version: $(casebook --version)"

Xvfb :42 -screen 0 1400x900x24 -nolisten tcp >/tmp/xvfb.log 2>&1 &
# The marker tells this check's processes from the host's (/proc is the host's).
export DISPLAY=:42 GDK_BACKEND=x11 NO_AT_BRIDGE=1 FRESH_INSTALL_CHECK=1 RUST_BACKTRACE=1 CASEBOOK_LOG=${CASEBOOK_LOG:-info}
for _ in $(seq 50); do [ -e /tmp/.X11-unix/X42 ] && break; sleep 0.1; done
exec dbus-run-session -- python3 - <<'PY'
import json, os, subprocess, sys, time, urllib.request

def call(method, path, body=None):
    req = urllib.request.Request(
        f"http://127.0.0.1:4444{path}", method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.load(r)["value"]

driver = subprocess.Popen(["tauri-driver", "--port", "4444"], stdout=subprocess.DEVNULL)
for _ in range(100):
    try:
        urllib.request.urlopen("http://127.0.0.1:4444/status", timeout=1)
        break
    except Exception:
        time.sleep(0.1)
try:
    sid = call("POST", "/session", {"capabilities": {"alwaysMatch": {
        "browserName": "wry", "tauri:options": {"application": "/usr/bin/casebook-app"}}}})["sessionId"]
    print("=== the installed app is up under WebDriver:", call("GET", f"/session/{sid}/title"))
    doc = "/root/Documents/Report draft.docx"
    print(f"=== gio open '{doc}'")
    subprocess.run(["gio", "open", doc], check=True, timeout=60)
    css = f'[data-testid=doc-card][data-path="{doc}"][data-state=ready]'
    deadline = time.time() + 60
    while time.time() < deadline:
        found = call("POST", f"/session/{sid}/elements", {"using": "css selector", "value": css})
        if found:
            el = next(iter(found[0].values()))
            name = call("GET", f"/session/{sid}/element/{el}/attribute/aria-label")
            print(f"card arrived in the running window: {name} (ready)")
            break
        time.sleep(0.5)
    else:
        sys.exit("no card for the opened document within 60 s")
    def ours():
        n = 0
        for p in os.listdir("/proc"):
            try:
                comm = open(f"/proc/{p}/comm").read().strip()
                env = open(f"/proc/{p}/environ", "rb").read().split(b"\0")
            except (OSError, ValueError):
                continue
            n += comm == "casebook-app" and b"FRESH_INSTALL_CHECK=1" in env
        return n
    for _ in range(100):
        if ours() == 1:
            break
        time.sleep(0.1)
    print(f"casebook-app processes now: {ours()} (the second start handed over and exited)")
    if ours() != 1:
        sys.exit("the second start is still running")
    call("DELETE", f"/session/{sid}")
finally:
    driver.kill()
PY
CHECK

echo "=== apt purge $pkg"
in_root apt-get purge -y -q "$pkg"
left=0
while IFS= read -r f; do
  [ -e "$R$f" ] || [ -L "$R$f" ] || continue
  if [ -d "$R$f" ] && ! [ -L "$R$f" ]; then
    # Shared folders (/usr/bin, the icon theme's) stay when another package owns them.
    if in_root dpkg -S "$f" >/dev/null 2>&1 || [ -n "$(ls -A "$R$f")" ]; then continue; fi
  fi
  echo "left behind: $f"; left=1
done < "$R/tmp/files.txt"
[ $left -eq 0 ] || { echo "fresh-install: apt purge left files behind" >&2; exit 1; }
echo "=== purged: none of the $(wc -l < "$R/tmp/files.txt") paths the package installed remain"
echo "fresh-install: OK"
