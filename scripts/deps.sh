#!/usr/bin/env bash
# Installs what Slate needs on a Debian or Ubuntu machine, skipping whatever is already there.
# Sourced by scripts/test.sh and scripts/start.sh; safe to run again.
set -euo pipefail

need_apt=()
want() { dpkg -s "$1" >/dev/null 2>&1 || need_apt+=("$1"); }

# Building the engine: a C compiler for the bundled SQLite, libgit2 and zstd.
want build-essential
want pkg-config
# Tests that drive real terminals: tmux, and an X11 desktop for `slate focus` (a virtual
# display, a window manager that speaks EWMH, a terminal, and the tools that activate windows).
want tmux
# Remote machines (tests/remote/, benches/remote.rs): Slate runs the system ssh, and the tests
# and the benchmark run a real sshd on 127.0.0.1.
want openssh-client
want openssh-server
# The window page's test: headless Chromium driven over WebDriver from a Node script.
want chromium
want chromium-driver
want nodejs
# The hosted end-to-end check (fixtures/recorder/hosted_e2e.sh): npm installs the real agent
# CLIs, python3 runs the fake model server and the poller. A Node from NodeSource brings its own
# npm, and Debian's npm package would conflict with it, so npm is only asked for when missing.
want python3
# The stand-in KWin of tests/focus/kwin.rs (fixtures/focus/fake-kwin.py) serves D-Bus from Python.
want python3-dbus
want python3-gi
command -v npm >/dev/null 2>&1 || want npm
want git
# The desktop app (src-tauri): Tauri's build dependencies on Linux. The AppIndicator library is
# loaded at run time for the tray, so the app needs it to run as well.
want libwebkit2gtk-4.1-dev
want libayatana-appindicator3-dev
want librsvg2-dev
want libxdo-dev
want libssl-dev
# The headless desktop and focus tests (src-tauri/tests/desktop.sh, tests/focus/x11.rs): an X server, a private D-Bus session, a
# tray host (status-notifier-watcher), a notification server, a window manager, a terminal, and
# the tools that read pixels, windows and D-Bus.
want xvfb
want xauth
want dbus-x11
want dunst
want libnotify-bin
want haskell-status-notifier-item-utils
want imagemagick
want openbox
want xterm
want x11-utils
want xdotool
want wmctrl
# Terminal sensing in kitty (fixtures/recorder/record_terminals.sh, and sensed_e2e.sh's kitty check):
# kitty from Debian runs under Xvfb with Mesa's software OpenGL and needs one monospace font.
want kitty
# The desktop's own terminals read through the accessibility bus (tests/terminals/accessibility.rs):
# xfce4-terminal and GNOME Terminal, both on VTE, the bus itself, and its GObject bindings, through
# which fixtures/recorder/atspi_text.py (the live tests' own eyes) reads a tab.
want xfce4-terminal
want gnome-terminal
want at-spi2-core
want gir1.2-atspi-2.0
want libgl1-mesa-dri
want fonts-dejavu-core
# Focus on Wayland (tests/focus/sway.rs): a headless Sway with foot windows, run as a user the
# test makes (Sway refuses root), through runuser (util-linux) and useradd (passwd).
want sway
want foot

# The packages (scripts/package.sh, scripts/package-test.sh): Tauri's bundler needs nothing more
# (its .rpm writer is built in, no rpmbuild); the test reads the .rpm with rpm, looks the man page up
# with man-db, loads the completion the way bash-completion does, checks the user unit with
# systemd-analyze (no running systemd needed) and the desktop entry with desktop-file-validate.
want rpm
want man-db
want bash-completion
want systemd
want desktop-file-utils

for extra in "$@"; do want "$extra"; done

if [ "${#need_apt[@]}" -gt 0 ]; then
  echo "slate: installing ${need_apt[*]}" >&2
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  # The tests run their own sshd on 127.0.0.1; installing openssh-server must not start the
  # system's on every address. A policy-rc.d that refuses every start does that, for this
  # install only (one already there is left alone).
  policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' | $sudo_cmd tee "$policy" >/dev/null
    $sudo_cmd chmod +x "$policy"
  fi
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
  if [ -n "$policy" ]; then $sudo_cmd rm -f "$policy"; fi
fi

if ! command -v cargo >/dev/null 2>&1; then
  [ -x "$HOME/.cargo/bin/cargo" ] && export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v cargo >/dev/null 2>&1; then
  if apt-cache show rustup >/dev/null 2>&1; then
    echo "slate: installing the Rust toolchain with rustup" >&2
    sudo_cmd=""
    [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq rustup >/dev/null
    rustup default stable
  else
    echo "slate: no Rust toolchain found. Install one from https://rustup.rs (Slate needs Rust 1.89 or newer)." >&2
    exit 1
  fi
fi
