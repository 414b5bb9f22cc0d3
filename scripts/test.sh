#!/usr/bin/env bash
# Installs what is missing, then runs every check CI runs: formatting, lints and all tests.
# Everything is built in Cargo's target folder, <repo>/target or CARGO_TARGET_DIR, which every
# script and test below finds through scripts/target-dir.sh (sourced here, so they need not ask).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
source scripts/target-dir.sh

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== cargo test"
cargo test --workspace --locked -- --include-ignored
echo "== the window page (headless Chromium)"
node ui/test/run.mjs
echo "== desktop (headless: Xvfb, D-Bus, tray, notifications)"
src-tauri/tests/desktop.sh
echo "== packages: build the .deb and .rpm, install the .deb, check it, remove it"
# A build of the app and the command line with the size-built `desktop` profile, then bundling:
# 8 min 45 s the first time on 2 cores (about 9 CPU-minutes).
packaged=$SECONDS
scripts/package.sh
scripts/package-test.sh
echo "packages: $((SECONDS - packaged)) s"
echo "== hosted sessions end to end (the real Codex, Gemini CLI and Copilot CLI under slate run)"
# The CLIs are installed once into the target folder (pinned versions; about 720 MB with
# Copilot CLI's native binary) and reused.
SLATE_BIN="$CARGO_TARGET_DIR/debug/slate" SLATE_REC_NPM="$CARGO_TARGET_DIR/agent-clis" \
  CODEX_PKG_VERSION=0.171.0 GEMINI_PKG_VERSION=0.61.0 COPILOT_PKG_VERSION=1.0.102 \
  fixtures/recorder/hosted_e2e.sh all
echo "== sensed terminals end to end (the real CLIs unwrapped in tmux panes, and Codex in kitty)"
# Codex, Gemini CLI, OpenCode, Claude Code and Copilot CLI started directly in a private tmux
# server (not under slate run), and Codex in a headless kitty with remote control; the pinned CLIs
# are shared.
SLATE_BIN="$CARGO_TARGET_DIR/debug/slate" SLATE_REC_NPM="$CARGO_TARGET_DIR/agent-clis" \
  CODEX_PKG_VERSION=0.171.0 GEMINI_PKG_VERSION=0.61.0 OPENCODE_PKG_VERSION=1.18.33 \
  CLAUDE_PKG_VERSION=2.1.332 COPILOT_PKG_VERSION=1.0.102 fixtures/recorder/sensed_e2e.sh all
echo "== the agents' own hooks end to end (the real CLIs under script, outside tmux)"
# Gemini CLI, Codex and Claude Code with Slate's hooks installed in a terminal Slate cannot read
# (OpenCode, whose TUI needs a real terminal, in a tmux pane); without hooks, with no Slate and
# with one that never answers; the pinned CLIs are shared.
SLATE_BIN="$CARGO_TARGET_DIR/debug/slate" SLATE_REC_NPM="$CARGO_TARGET_DIR/agent-clis" \
  CODEX_PKG_VERSION=0.171.0 GEMINI_PKG_VERSION=0.61.0 OPENCODE_PKG_VERSION=1.18.33 \
  CLAUDE_PKG_VERSION=2.1.332 fixtures/recorder/hooks_e2e.sh all
echo "== answering end to end (slate approve/deny/answer on the real CLIs in tmux panes)"
# Claude Code (approve, deny, a question by number, a working session refused), Codex (approve,
# deny), OpenCode (approve) and Copilot CLI (approve, deny), through a running slate serve; the
# pinned CLIs are shared.
SLATE_BIN="$CARGO_TARGET_DIR/debug/slate" SLATE_REC_NPM="$CARGO_TARGET_DIR/agent-clis" \
  CODEX_PKG_VERSION=0.171.0 OPENCODE_PKG_VERSION=1.18.33 CLAUDE_PKG_VERSION=2.1.332 \
  COPILOT_PKG_VERSION=1.0.102 fixtures/recorder/answer_e2e.sh all
