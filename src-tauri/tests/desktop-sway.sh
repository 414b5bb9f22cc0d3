# shellcheck shell=bash
# A notification click on Wayland, sourced by desktop.sh: a headless Sway (run as a user made for
# the test, since Sway refuses root; tests/focus/sway.rs does the same) with two foot windows,
# each running a stand-in Claude Code. The app (on the X server, as root) is told of one's flip,
# and the notification's default action, invoked through dunst, has to focus that foot window in
# Sway's tree. Then quiet while you look: a flip in the focused foot window sends nothing, a flip
# in the other is told. It uses desktop.sh's `check`, `eventually`, `line`, `transcript`,
# `log_has`, `label_is`, `notify_count`, `api_base` and `$HOME`, `$WORK`, `$LOG`, `$SLATE` when
# called.

SWAY_USER=slate-sway-test

# The focused window's app_id in Sway's tree.
sway_focused() {
  swaymsg -s "$SWAYSOCK_TEST" -t get_tree 2>/dev/null | python3 -c '
import json, sys
def walk(node):
    if node.get("focused") and node.get("app_id"):
        print(node["app_id"])
    for child in node.get("nodes", []) + node.get("floating_nodes", []):
        walk(child)
walk(json.load(sys.stdin))'
}
sway_focused_is() { [ "$(sway_focused)" = "$1" ]; }

# `runuser` as the Sway user with a clean environment: its runtime folder, and the session's
# display and IPC socket once Sway runs (what its clients inherit).
as_sway_user() {
  runuser -u "$SWAY_USER" -- env -i PATH="$PATH" HOME="$SWAY_RT" XDG_RUNTIME_DIR="$SWAY_RT" \
    ${SWAYSOCK_TEST:+WAYLAND_DISPLAY=wayland-1 SWAYSOCK="$SWAYSOCK_TEST"} "$@"
}

sway_checks() {
  local tool
  for tool in sway swaymsg foot runuser useradd; do
    command -v "$tool" >/dev/null || { bad "a click on Wayland: $tool is not installed (scripts/deps.sh)"; return; }
  done
  id "$SWAY_USER" >/dev/null 2>&1 || useradd --system --no-create-home --shell /bin/sh "$SWAY_USER" ||
    { bad "a click on Wayland: cannot make the user $SWAY_USER (this part runs as root)"; return; }
  SWAY_RT="$(mktemp -d /tmp/slate-sway.XXXXXX)"
  SWAYSOCK_TEST=""
  mkdir -p "$SWAY_RT/bin" "$SWAY_RT/code/way-a" "$SWAY_RT/code/way-b"
  cp "$(command -v sleep)" "$SWAY_RT/bin/claude"
  printf 'output HEADLESS-1 resolution 1280x800\n' >"$SWAY_RT/config"
  chown -R "$SWAY_USER" "$SWAY_RT" && chmod 700 "$SWAY_RT"
  as_sway_user WLR_BACKENDS=headless WLR_LIBINPUT_NO_DEVICES=1 WLR_RENDERER=pixman \
    sway -c "$SWAY_RT/config" >"$WORK/sway.log" 2>&1 &
  pids+=($!)
  sway_up() { [ -e "$SWAY_RT/wayland-1" ] && compgen -G "$SWAY_RT/sway-ipc.*" >/dev/null; }
  if ! eventually 15 sway_up; then
    bad "a headless Sway starts (it said: $(tail -n 3 "$WORK/sway.log" | tr '\n' ' '))"
    return
  fi
  SWAYSOCK_TEST="$(compgen -G "$SWAY_RT/sway-ipc.*" | head -n 1)"
  local name
  for name in a b; do
    as_sway_user foot -a "slate-way-$name" -D "$SWAY_RT/code/way-$name" "$SWAY_RT/bin/claude" 100000 \
      >/dev/null 2>&1 &
    pids+=($!)
    # One window at a time, so the second opens last and has the focus.
    eventually 10 sway_focused_is "slate-way-$name" || true
  done
  check "two foot windows on the headless Sway, the second focused" sway_focused_is slate-way-b

  local WAY_A=de5c00a1-0000-4000-8000-0000000000a1 WAY_B=de5c00b1-0000-4000-8000-0000000000b1
  local A_DIR="$SWAY_RT/code/way-a" B_DIR="$SWAY_RT/code/way-b" A_FILE B_FILE
  A_FILE="$(transcript "$A_DIR" "$WAY_A")"
  B_FILE="$(transcript "$B_DIR" "$WAY_B")"
  sleep 1 # the processes must be older than the sessions' first lines
  line "$A_DIR" "$WAY_A" '"type":"user","message":{"role":"user","content":"tidy the routes"}' >"$A_FILE"
  line "$B_DIR" "$WAY_B" '"type":"user","message":{"role":"user","content":"bump the deps"}' >"$B_FILE"
  # Each with its process found (the engine's process scan may come a few seconds later).
  sway_listed() { env SLATE_API="$(api_base)" "$SLATE" sessions --json 2>/dev/null | python3 -c '
import json, sys
pids = {s["id"]: s.get("pid") for s in json.load(sys.stdin)["sessions"]}
sys.exit(0 if all(pids.get(id) for id in sys.argv[1:]) else 1)' "$WAY_A" "$WAY_B"; }
  check "the app's engine sees the two sessions on Sway, each with its process" eventually 30 sway_listed

  # way-a's turn ends while way-b's window has the focus: told, and the click focuses way-a.
  dunstctl close-all >/dev/null 2>&1
  local before
  before="$(notify_count)"
  finish() { # dir id file
    {
      line "$1" "$2" '"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Done."}]}'
      line "$1" "$2" '"type":"system","subtype":"turn_duration","durationMs":900'
    } >>"$3"
  }
  finish "$A_DIR" "$WAY_A" "$A_FILE"
  told_a() { [ "$(notify_count)" -eq $((before + 1)) ] && grep -q '"way-a · Claude Code needs you"' "$NOTIFY_LOG"; }
  check "way-a's flip, its window behind, is told" eventually 10 told_a
  dunstctl action 0 >/dev/null 2>&1
  check "a click on its notification through dunst reaches the focus handler" eventually 5 log_has "focus requested session=$WAY_A"
  check "and Sway's tree shows way-a's foot window focused" eventually 5 sway_focused_is slate-way-a

  # Quiet while you look: way-a is in front now. Its next turn's end is not told; way-b's is.
  line "$A_DIR" "$WAY_A" '"type":"user","message":{"role":"user","content":"and the tests"}' >>"$A_FILE"
  working_a() { env SLATE_API="$(api_base)" "$SLATE" sessions --json 2>/dev/null | python3 -c '
import json, sys
print(next(s["status"] for s in json.load(sys.stdin)["sessions"] if s["id"] == sys.argv[1]))' "$WAY_A" | grep -qx working; }
  eventually 10 working_a || true
  before="$(notify_count)"
  finish "$A_DIR" "$WAY_A" "$A_FILE"
  looked_a() { grep "not notifying, the person is looking" "$LOG" | grep -q "way-a"; }
  check "way-a's next flip, its window in front, is not told (the app's log says why)" eventually 10 looked_a
  sleep 3
  check "and no Notify came for it after the burst window" test "$(notify_count)" -eq "$before"
  finish "$B_DIR" "$WAY_B" "$B_FILE"
  told_b() { [ "$(notify_count)" -eq $((before + 1)) ] && tail -n 100 "$NOTIFY_LOG" | grep -q '"way-b · Claude Code needs you"'; }
  check "way-b's flip, its window behind, is told" eventually 10 told_b

  # Back to nothing needing you: both at work, and Sway gone with its windows.
  line "$A_DIR" "$WAY_A" '"type":"user","message":{"role":"user","content":"next"}' >>"$A_FILE"
  line "$B_DIR" "$WAY_B" '"type":"user","message":{"role":"user","content":"next"}' >>"$B_FILE"
  check "the tray label is back to 0 after the Sway sessions" eventually 10 label_is 0
  swaymsg -s "$SWAYSOCK_TEST" exit >/dev/null 2>&1
}
