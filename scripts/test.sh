#!/usr/bin/env bash
# Installs what is missing, then runs every check CI runs: formatting, lints and all tests.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== cargo test"
cargo test --workspace --locked
echo "== the window page (headless Chromium)"
node ui/test/run.mjs
echo "== desktop (headless: Xvfb, D-Bus, tray, notifications)"
src-tauri/tests/desktop.sh
