#!/usr/bin/env bash
# Cargo's target folder, the one place every script finds what Cargo built (and keeps what it
# installs beside it: the Tauri CLI, the agent CLIs). Sourced, it exports CARGO_TARGET_DIR as that
# folder's absolute path, so that Cargo run from another folder (the Tauri CLI runs it from
# src-tauri/), Node and the scripts started from here all use the same one without asking again.
# Run, it prints the path (ui/test/run.mjs runs it).
#
# The folder is Cargo's own choice: CARGO_TARGET_DIR when it is set (a relative path is taken from
# the repository root, the folder every script here runs Cargo in), else `build.target-dir` from a
# Cargo config, else <repo>/target. Only Cargo knows the last two, so then it is asked once
# (`cargo metadata`, a fraction of a second).
#
# Usage: . scripts/target-dir.sh      (then "$CARGO_TARGET_DIR/debug/slate")
#        bash scripts/target-dir.sh   (prints the folder)

slate_target_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -n "${CARGO_TARGET_DIR:-}" ]; then
  case "$CARGO_TARGET_DIR" in
    /*) ;;
    *) CARGO_TARGET_DIR="$slate_target_root/$CARGO_TARGET_DIR" ;;
  esac
else
  if ! command -v cargo >/dev/null 2>&1; then
    echo "slate: cargo is not on PATH, so Cargo's target folder is unknown; install a Rust toolchain (scripts/deps.sh does, or see https://rustup.rs) or set CARGO_TARGET_DIR" >&2
    exit 1
  fi
  if ! command -v python3 >/dev/null 2>&1; then
    echo "slate: python3 is needed to read \`cargo metadata\` (scripts/deps.sh installs it), or set CARGO_TARGET_DIR" >&2
    exit 1
  fi
  CARGO_TARGET_DIR="$(cd "$slate_target_root" && cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')" || {
    echo "slate: \`cargo metadata\` did not say where Cargo builds (see its message above)" >&2
    exit 1
  }
fi
export CARGO_TARGET_DIR
unset slate_target_root

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  printf '%s\n' "$CARGO_TARGET_DIR"
fi
