#!/usr/bin/env bash
# Installs what is missing, then runs every check CI runs: formatting, lints and all tests.
# Everything is built in Cargo's target folder, <repo>/target or CARGO_TARGET_DIR, which every
# script and test below finds through scripts/target-dir.sh (sourced here, so they need not ask).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
source scripts/target-dir.sh

# What a program run by a test caches by the XDG rules (Mesa's shader cache, GLib's dconf cache)
# goes into the target folder, never the real HOME, even from a test that forgot to set its own.
export XDG_CACHE_HOME="$CARGO_TARGET_DIR/xdg-cache"
mkdir -p "$XDG_CACHE_HOME"

# Each stage's heading says when it starts, and the run ends with each stage's duration (up to
# the next heading, or the end), so a run shows where its time goes, passed or failed. The stages
# that run in the background beside others say their own wall-clock time in that summary.
stage_names=()
stage_starts=()
stage() {
  echo "== $1 (at $((SECONDS / 60)) min $((SECONDS % 60)) s)"
  stage_names+=("$1")
  stage_starts+=("$SECONDS")
}
durations() {
  local i end
  echo "== the stages' durations (wall clock):"
  for i in "${!stage_names[@]}"; do
    end=${stage_starts[$((i + 1))]:-$SECONDS}
    printf '%6d s  %s\n' "$((end - stage_starts[i]))" "${stage_names[i]%% (*}"
  done
  for i in "${!background_names[@]}"; do
    printf '%6s    %s\n' "" "${background_names[i]}"
  done
  echo "== scripts/test.sh ran for $((SECONDS / 60)) min $((SECONDS % 60)) s"
}
background_names=()
trap durations EXIT

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
stage "packages: the .deb and the .rpm start building in the background, at idle priority"
# A build of the app and the command line with the size-built `desktop` profile, then bundling:
# about 15 min the first time on 2 cores. It needs the CPU while the live checks below mostly
# wait on the fake model and on sleeps, so it runs beside them under SCHED_IDLE (`chrt --idle`)
# and idle I/O: it gets the CPU only when they leave it, and cannot slow their timed checks. It
# is installed and checked after them. Its own session (setsid) is killed if this script stops.
packages_log="$CARGO_TARGET_DIR/packages.log"
packaged=$SECONDS
setsid chrt --idle 0 ionice -c 3 env npm_config_cache="$CARGO_TARGET_DIR/npm-cache" \
  scripts/package.sh >"$packages_log" 2>&1 </dev/null &
packages_pid=$!
background=("$packages_pid")
# The trap keeps the script's own exit status: under `set -e` a kill of a group that has already
# ended would otherwise fail the run after every check passed.
trap 'status=$?
      for group in "${background[@]}"; do kill -- -"$group" 2>/dev/null || true; done
      durations
      exit "$status"' EXIT
# The live checks fail a run that wrote into the real HOME; this build's cargo writes its own
# cache there (CARGO_HOME), which is none of theirs.
export SLATE_E2E_HOME_ALLOW="${CARGO_HOME:-$HOME/.cargo}${SLATE_E2E_HOME_ALLOW:+:$SLATE_E2E_HOME_ALLOW}"
# The rules the live checks below judge their polls by, on made-up polls first.
python3 fixtures/recorder/e2e_judge.py
# And the harness's retry of a failed live check, on made-up checks.
fixtures/recorder/e2e_retry_test.sh
# The live checks: the real CLIs against a fake model on 127.0.0.1. Each script has its own tmux
# server, fake model, Slate, throwaway HOMEs and (for the terminals that need X) its own Xvfb on a
# display Xvfb picks, so scripts with generous timing limits run side by side (`beside` below):
# the hosted checks (limits of 12 s and 5 s) beside the sensed ones (3 s); the hooks and
# answering checks, whose limits are 1 s, one after the other, with only the checkpoints (limits
# of 3 to 20 s, and nearly all of it waiting) beside them. The CLIs are installed once into the
# target folder (pinned versions; about 3 GB with the native binaries of Copilot CLI, Cline CLI
# and Kilo Code) and reused; every one is installed first, here, so nothing is installed into the
# shared folder while a check runs one.
live_env=(env SLATE_BIN="$CARGO_TARGET_DIR/debug/slate" SLATE_REC_NPM="$CARGO_TARGET_DIR/agent-clis"
  CODEX_PKG_VERSION=0.171.0 GEMINI_PKG_VERSION=0.61.0 OPENCODE_PKG_VERSION=1.18.33
  CLAUDE_PKG_VERSION=2.1.332 QWEN_PKG_VERSION=0.24.4 COPILOT_PKG_VERSION=1.0.102
  CLINE_PKG_VERSION=3.0.65 KILO_PKG_VERSION=7.7.9 PI_PKG_VERSION=0.73.1)
hosted=("${live_env[@]}" fixtures/recorder/hosted_e2e.sh all)
sensed=("${live_env[@]}" fixtures/recorder/sensed_e2e.sh all)
checkpoints=("${live_env[@]}" fixtures/recorder/checkpoints_e2e.sh all)
hooks=("${live_env[@]}" fixtures/recorder/hooks_e2e.sh all)
answering=("${live_env[@]}" fixtures/recorder/answer_e2e.sh all)

# `beside NAME CMD...` runs a check in its own session (setsid, killed if this script stops) with
# its output in a log; `collect NAME` waits for it, prints its log, says how long it ran beside
# the others, and fails the run if it failed.
declare -A beside_pid beside_start
beside() {
  local name=$1
  shift
  setsid "$@" >"$CARGO_TARGET_DIR/${name// /-}.log" 2>&1 </dev/null &
  beside_pid[$name]=$!
  beside_start[$name]=$SECONDS
  background+=("$!")
  echo "($name: started beside the stage below; its log is printed when it is done)"
}
collect() {
  local name=$1 status=0
  wait "${beside_pid[$name]}" || status=$?
  background_names+=("(beside the stages above: $name, $((SECONDS - beside_start[$name])) s)")
  cat "$CARGO_TARGET_DIR/${name// /-}.log"
  [ "$status" -eq 0 ] || { echo "$name: failed ($status)"; exit 1; }
}

stage "the pinned agent CLIs (installed once, reused)"
for check in hosted sensed checkpoints hooks answering; do
  declare -n run=$check
  SLATE_E2E_PIN_ONLY=1 "${run[@]}"
  unset -n run
done
stage "sensed terminals end to end (the real CLIs unwrapped in tmux panes, Codex in kitty, and GNOME Terminal and xfce4-terminal tabs), beside the hosted sessions"
# Codex, Gemini CLI, Qwen Code, Copilot CLI, Cline CLI and Kilo Code under slate run, beside
# Codex, Gemini CLI, OpenCode, Claude Code, Qwen Code, Copilot CLI, Cline CLI and Kilo Code started
# directly in a private tmux server (not under slate run), Codex in a headless kitty with remote
# control, and Codex in the desktop terminals read through the accessibility bus.
beside "hosted sessions end to end" "${hosted[@]}"
"${sensed[@]}"
stage "hosted sessions end to end: the results"
collect "hosted sessions end to end"
stage "the agents' own hooks end to end (the real CLIs under script, outside tmux), beside the session checkpoints"
# Pi coding agent, Qwen Code, Copilot CLI, Cline CLI and Kilo Code in tmux panes (a finished turn,
# a question where the CLI has one, the model at work, a command, a long task and the pane closed:
# nearly all of it waiting) run beside this stage and the next. Here: Gemini CLI, Codex, Claude
# Code, OpenCode, Qwen Code, Copilot CLI and Kilo Code with Slate's hooks installed in a terminal
# Slate cannot read, and a question for Kilo Code and Cline CLI; a long approved command for Codex
# and Gemini CLI; without hooks, with no Slate and with one that never answers.
beside "session checkpoints end to end" "${checkpoints[@]}"
"${hooks[@]}"
stage "answering end to end (slate approve/deny/answer on the real CLIs in tmux panes)"
# Claude Code (approve, deny, a question by number, a working session refused), Codex (approve,
# deny), OpenCode (approve), Qwen Code, Copilot CLI, Cline CLI and Kilo Code (approve, deny),
# Codex in kitty, and Codex and Gemini CLI under slate run, through a running slate serve.
"${answering[@]}"
stage "session checkpoints: the results"
collect "session checkpoints end to end"
stage "packages: wait for the build, then install the .deb, check it, remove it"
packages_status=0
wait "$packages_pid" || packages_status=$?
cat "$packages_log"
[ "$packages_status" -eq 0 ] || { echo "packages: scripts/package.sh failed ($packages_status)"; exit 1; }
echo "packages: built in the background in $((SECONDS - packaged)) s (wall clock, beside the live checks)"
background_names+=("(beside the stages above: the packages' build, $((SECONDS - packaged)) s)")
scripts/package-test.sh
