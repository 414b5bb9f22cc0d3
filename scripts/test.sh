#!/usr/bin/env bash
# Installs what is missing, then runs every check CI runs: formatting, lints and all tests.
# Everything is built in Cargo's target folder, <repo>/target or CARGO_TARGET_DIR, which every
# script and test below finds through scripts/target-dir.sh (sourced here, so they need not ask).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
source scripts/target-dir.sh

# Each stage's heading says when it starts, so a run shows where its time goes.
stage() { echo "== $1 (at $((SECONDS / 60)) min $((SECONDS % 60)) s)"; }
trap 'echo "== scripts/test.sh ran for $((SECONDS / 60)) min $((SECONDS % 60)) s"' EXIT

stage "cargo fmt --check"
cargo fmt --all -- --check
stage "cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings
stage "cargo test"
cargo test --workspace --locked -- --include-ignored
stage "the window page (headless Chromium)"
node ui/test/run.mjs
stage "desktop (headless: Xvfb, D-Bus, tray, notifications)"
src-tauri/tests/desktop.sh
stage "packages: build the .deb and .rpm, install the .deb, check it, remove it"
# A build of the app and the command line with the size-built `desktop` profile, then bundling:
# 8 min 45 s the first time on 2 cores (about 9 CPU-minutes).
packaged=$SECONDS
scripts/package.sh
scripts/package-test.sh
echo "packages: $((SECONDS - packaged)) s"
stage "hosted sessions end to end (the real Codex, Gemini CLI, Qwen Code and Copilot CLI under slate run)"
# The CLIs are installed once into the target folder (pinned versions; about 720 MB with
# Copilot CLI's native binary) and reused.
SLATE_BIN="$CARGO_TARGET_DIR/debug/slate" SLATE_REC_NPM="$CARGO_TARGET_DIR/agent-clis" \
  CODEX_PKG_VERSION=0.171.0 GEMINI_PKG_VERSION=0.61.0 QWEN_PKG_VERSION=0.24.4 \
  COPILOT_PKG_VERSION=1.0.102 fixtures/recorder/hosted_e2e.sh all
stage "sensed terminals end to end (the real CLIs unwrapped in tmux panes, and Codex in kitty)"
# Codex, Gemini CLI, OpenCode, Claude Code, Qwen Code, Copilot CLI and Kilo Code started directly
# in a private tmux server (not under slate run), and Codex in a headless kitty with remote
# control; the pinned CLIs are shared.
SLATE_BIN="$CARGO_TARGET_DIR/debug/slate" SLATE_REC_NPM="$CARGO_TARGET_DIR/agent-clis" \
  CODEX_PKG_VERSION=0.171.0 GEMINI_PKG_VERSION=0.61.0 OPENCODE_PKG_VERSION=1.18.33 \
  CLAUDE_PKG_VERSION=2.1.332 QWEN_PKG_VERSION=0.24.4 COPILOT_PKG_VERSION=1.0.102 \
  KILO_PKG_VERSION=7.7.9 fixtures/recorder/sensed_e2e.sh all
stage "the agents' own hooks end to end (the real CLIs under script, outside tmux)"
# Gemini CLI, Codex, Claude Code and OpenCode with Slate's hooks installed in a terminal Slate
# cannot read, a long approved command for Codex and Gemini CLI; without hooks, with no Slate and
# with one that never answers; the pinned CLIs are shared. Qwen Code's hook checks are run by
# name for now (hooks_e2e.sh says why).
SLATE_BIN="$CARGO_TARGET_DIR/debug/slate" SLATE_REC_NPM="$CARGO_TARGET_DIR/agent-clis" \
  CODEX_PKG_VERSION=0.171.0 GEMINI_PKG_VERSION=0.61.0 OPENCODE_PKG_VERSION=1.18.33 \
  CLAUDE_PKG_VERSION=2.1.332 QWEN_PKG_VERSION=0.24.4 fixtures/recorder/hooks_e2e.sh all
stage "answering end to end (slate approve/deny/answer on the real CLIs in tmux panes)"
# Claude Code (approve, deny, a question by number, a working session refused), Codex (approve,
# deny), OpenCode (approve), Qwen Code, Copilot CLI and Kilo Code (approve, deny), through a
# running slate serve; the pinned CLIs are shared.
SLATE_BIN="$CARGO_TARGET_DIR/debug/slate" SLATE_REC_NPM="$CARGO_TARGET_DIR/agent-clis" \
  CODEX_PKG_VERSION=0.171.0 OPENCODE_PKG_VERSION=1.18.33 CLAUDE_PKG_VERSION=2.1.332 \
  QWEN_PKG_VERSION=0.24.4 COPILOT_PKG_VERSION=1.0.102 KILO_PKG_VERSION=7.7.9 \
  fixtures/recorder/answer_e2e.sh all
stage "session checkpoints end to end (the agents added after the first five, in tmux panes)"
# Pi coding agent: a finished turn, the model at work, a command, a long task and the pane closed.
SLATE_BIN="$CARGO_TARGET_DIR/debug/slate" SLATE_REC_NPM="$CARGO_TARGET_DIR/agent-clis" \
  PI_PKG_VERSION=0.73.1 fixtures/recorder/checkpoints_e2e.sh all
