#!/usr/bin/env bash
# Installs what is missing, builds Slate, and shows the agent sessions on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
cargo build --release --locked -p slate
exec target/release/slate sessions "$@"
