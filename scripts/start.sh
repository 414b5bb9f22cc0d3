#!/usr/bin/env bash
# Installs what is missing, builds Slate, and starts the tray app. Without a graphical session it
# shows the sessions in the terminal instead; `slate serve` runs the same engine headless.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
# Cargo builds into <repo>/target, or CARGO_TARGET_DIR when set.
source scripts/target-dir.sh
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ] && [ "$(uname)" = "Linux" ]; then
  echo "slate: no graphical session (DISPLAY is not set); listing the sessions instead." >&2
  cargo build --release --locked -p slate
  exec "$CARGO_TARGET_DIR/release/slate" sessions "$@"
fi
echo "slate: building the tray app (the first build takes several minutes)" >&2
cargo build --release --locked -p slate -p slate-app
exec "$CARGO_TARGET_DIR/release/slate-app" --show "$@"
