#!/usr/bin/env bash
# Installs the .deb that scripts/package.sh built the way the README tells a person to
# (`apt-get install ./dist/slate_*.deb`), checks what got installed, runs the smoke part of the
# desktop test against the installed app, and removes the package again. Also reads the .rpm's
# header and file list (it cannot be installed on Debian).
#
# Usage: scripts/package-test.sh     (after scripts/package.sh; installs through sudo when not root)
# Prints one line per check and ends with `N passed, N failed`; exits non-zero on a failure.
set -uo pipefail
cd "$(dirname "$0")/.."

sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
# Waits for another apt or dpkg run (the machine may be installing something else) instead of
# failing at once.
apt_get() { $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 -y -qq "$@"; }

passed=0
failed=0
ok() { echo "ok   - $1"; passed=$((passed + 1)); }
bad() { echo "FAIL - $1"; failed=$((failed + 1)); }
check() { local name="$1"; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit; }

shopt -s nullglob
debs=(dist/slate_*.deb)
rpms=(dist/slate-*.rpm)
shopt -u nullglob
if [ "${#debs[@]}" -ne 1 ] || [ "${#rpms[@]}" -ne 1 ]; then
  bad "dist/ holds one .deb and one .rpm (run scripts/package.sh first)"
  finish
fi
deb="${debs[0]}"
rpm_file="${rpms[0]}"
version="$(cargo metadata --no-deps --format-version 1 |
  python3 -c 'import json, sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "slate"))')"

# ---- what the packages declare ----
field() { dpkg-deb -f "$deb" "$1"; }
check "the .deb is package slate, version $version (Cargo.toml's)" \
  test "$(field Package) $(field Version)" = "slate $version"
depends="$(field Depends)"
echo "     Depends: $depends"
has_dep() { printf '%s' "$depends" | tr ',' '\n' | sed 's/^ *//; s/ .*//' | grep -qx "$1"; }
check "the .deb depends on WebKitGTK 4.1" has_dep libwebkit2gtk-4.1-0
check "the .deb depends on the AppIndicator library the tray loads" has_dep libayatana-appindicator3-1
if command -v rpm >/dev/null 2>&1; then
  # rpm keeps a database even to read a package file, by default in ~/.rpmdb: a throwaway one
  # here, so the check leaves the HOME it runs in alone.
  rpm_db="$(mktemp -d)"
  rpm() { command rpm --dbpath "$rpm_db" "$@"; }
  check "the .rpm is package slate, version $version" \
    test "$(rpm -qp --qf '%{NAME} %{VERSION}' "$rpm_file" 2>/dev/null)" = "slate $version"
  requires="$(rpm -qpR "$rpm_file" 2>/dev/null)"
  check "the .rpm requires WebKitGTK 4.1" grep -q '^libwebkit2gtk-4.1.so.0' <<<"$requires"
  check "the .rpm requires the AppIndicator library" grep -q '^libayatana-appindicator3.so.1' <<<"$requires"
  same_files() {
    diff <(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {sub(/^\.?\/?/, "/", $6); print $6}' | sort) \
      <(rpm -qpl "$rpm_file" 2>/dev/null | sort)
  }
  check "the .rpm installs the same files as the .deb" same_files
  unset -f rpm
  rm -rf "$rpm_db"
else
  bad "rpm is not installed, so the .rpm was not read (scripts/deps.sh installs it)"
fi

# ---- install ----
if dpkg -s slate >/dev/null 2>&1; then
  bad "slate was already installed before this test; remove it first (apt-get remove slate)"
  finish
fi
# Whatever happens below, the machine is left without the package.
trap 'dpkg -s slate >/dev/null 2>&1 && apt_get remove slate >/dev/null 2>&1' EXIT
check "apt-get install ./$deb installs it with its dependencies" apt_get install "./$deb"

check "/usr/bin/slate --version prints the package version" \
  test "$(/usr/bin/slate --version 2>&1)" = "slate $version"
check "/usr/bin/slate-app is installed" test -x /usr/bin/slate-app
check "man -w slate finds the installed page" test "$(man -w slate 2>&1)" = /usr/share/man/man1/slate.1.gz
check "man -w slate-sessions finds a command's page" test "$(man -w slate-sessions 2>&1)" = /usr/share/man/man1/slate-sessions.1.gz
page_has_exit_status() { MANWIDTH=100 man slate 2>/dev/null | grep -q '^EXIT STATUS'; }
check "man slate shows the EXIT STATUS section" page_has_exit_status

# bash-completion loads a command's completion on first use from its completions folder, by the
# command's name; this finds the file the way an interactive bash does, then asks it about
# `slate <Tab>`.
completes() { # words... ; prints COMPREPLY
  bash -c '
    if [ -f /usr/share/bash-completion/bash_completion ]; then
      source /usr/share/bash-completion/bash_completion
      __load_completion slate || exit 3
    else
      source /usr/share/bash-completion/completions/slate
    fi
    fn="$(complete -p slate | sed -n "s/.*-F \([^ ]*\).*/\1/p")"
    [ -n "$fn" ] || exit 4
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
    "$fn" slate "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf "%s\n" "${COMPREPLY[@]}"' completes "$@"
}
offers_commands() {
  local offered word
  offered="$(completes slate "")" || return 1
  for word in sessions show focus doctor park await resume item claim release run serve watch completions man; do
    grep -qx "$word" <<<"$offered" || { echo "     not offered: $word"; return 1; }
  done
}
check "bash completion for 'slate ' offers the subcommands" offers_commands
check "bash completion for 'slate ses' completes to sessions" test "$(completes slate ses)" = sessions
check "zsh completion is installed" test -s /usr/share/zsh/vendor-completions/_slate
check "fish completion is installed" test -s /usr/share/fish/vendor_completions.d/slate.fish

unit=/usr/lib/systemd/user/slate.service
check "the user unit is installed" test -f "$unit"
if command -v systemd-analyze >/dev/null 2>&1; then
  # The user manager's checks need a runtime folder, not a running manager.
  runtime="$(mktemp -d)"
  verify() {
    local said
    said="$(XDG_RUNTIME_DIR="$runtime" systemd-analyze --user verify "$unit" 2>&1)" || { echo "$said"; return 1; }
    [ -z "$said" ] || { echo "$said"; return 1; }
  }
  check "systemd-analyze --user verify accepts the unit, with nothing to say" verify
  rm -rf "$runtime"
else
  echo "note: no systemd-analyze here; tests/cli.rs checks the unit with its parser"
fi

check "the desktop entry is installed" test -f /usr/share/applications/Slate.desktop
if command -v desktop-file-validate >/dev/null 2>&1; then
  check "desktop-file-validate accepts it" desktop-file-validate /usr/share/applications/Slate.desktop
fi
icons_present() {
  local size
  for size in 16 24 32 48 64 128 256 512; do
    [ -f "/usr/share/icons/hicolor/${size}x${size}/apps/slate-app.png" ] || { echo "     no ${size}x${size} icon"; return 1; }
  done
}
check "the icons are installed at every size from 16 to 512" icons_present

echo "== the desktop test's smoke part against the installed /usr/bin/slate-app"
check "the installed app: the tray appears with its count, and one notification fires" \
  src-tauri/tests/desktop.sh --smoke --app /usr/bin/slate-app

# ---- remove ----
installed_files="$(dpkg -L slate | while read -r path; do [ -f "$path" ] && echo "$path"; done)"
check "apt-get remove slate removes the package" apt_get remove slate
all_gone() {
  local path left=0
  while read -r path; do
    [ -e "$path" ] && { echo "     still there: $path"; left=1; }
  done <<<"$installed_files"
  [ "$left" -eq 0 ] && [ -n "$installed_files" ]
}
check "every file the package installed is gone ($(wc -l <<<"$installed_files") files)" all_gone
check "man -w slate no longer finds a page" bash -c '! man -w slate >/dev/null 2>&1'
finish
