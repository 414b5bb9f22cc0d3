# shellcheck shell=bash
# The decision hook answered from the desktop, sourced by desktop.sh (docs/hooks.md, "Decision
# hooks"): a stand-in Claude Code in a plain terminal (no multiplexer, no terminal's variable, so
# Slate cannot type there) whose permission call waits in `slate hook claude-code
# PermissionRequest --answer`, run as Claude Code 2.1.332 runs it, with the event it sends on its
# input (the shape of tests/hooks/runtime.rs's), against the app's own API socket. The tray's
# Allow once makes the waiting hook print the allow decision; a second call, denied from its
# notification's Deny (dunst's context menu), makes it print deny with "denied from Slate". Each
# answer is recorded in the app's store under its surface, as taken by the hook. It uses
# desktop.sh's check, eventually, submenu, click_in, log_has, $SLATE and $NOTIFY_LOG, and line and
# transcript (private-desktop.sh).

HOOKED=de5c0005-0000-4000-8000-000000000005
HOOKED_DIR="$HOME/code/hooked"

# The event $1 Claude Code 2.1.332 sends its hooks for the stand-in's Bash call of command $2 (tool
# use id $3): the one recorded in fixtures/hooks/events, with the stand-in's session, folder,
# transcript, command and call put in.
hooked_event() {
  python3 -c 'import json, sys
event = json.load(open(sys.argv[1]))
event.update(session_id=sys.argv[2], transcript_path=sys.argv[3], cwd=sys.argv[4])
event["tool_input"]["command"] = sys.argv[5]
if "tool_use_id" in event:
    event["tool_use_id"] = sys.argv[6]
if "permission_suggestions" in event:
    event["permission_suggestions"][0]["directories"] = [sys.argv[4]]
print(json.dumps(event, separators=(",", ":")))' "$ROOT/fixtures/hooks/events/claude-code-$1.json" \
    "$HOOKED" "$(transcript "$HOOKED_DIR" "$HOOKED")" "$HOOKED_DIR" "$2" "$3"
}
# The stand-in at a Bash call of command $2 (tool use id $1): the transcript line Claude Code writes
# before it asks, then both of its PermissionRequest hooks, the observing one and the decision
# hook, which waits in the background (at most 60 s) and leaves what it printed in
# $WORK/hook-$1.out and .err and its exit code in $WORK/hook-$1.code.
hooked_asks() {
  local event
  line "$HOOKED_DIR" "$HOOKED" '"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"'"$1"'","name":"Bash","input":{"command":"'"$2"'","description":"Create a probe file"}}]}' \
    >>"$(transcript "$HOOKED_DIR" "$HOOKED")"
  # Made first: a hook reads its event within 150 ms of its start, as Claude Code writes it.
  event="$(hooked_event PermissionRequest "$2" "$1")"
  printf '%s' "$event" | "$SLATE" hook claude-code PermissionRequest
  (
    printf '%s' "$event" | SLATE_HOOK_ANSWER_WITHIN_MS=60000 \
      "$SLATE" hook claude-code PermissionRequest --answer >"$WORK/hook-$1.out" 2>"$WORK/hook-$1.err"
    echo "$?" >"$WORK/hook-$1.code"
  ) &
  pids+=($!)
}
hook_ended() { [ -s "$WORK/hook-$1.code" ]; }
# The hook ended with 0, printed nothing on its error stream and one line on its output: the
# decision $2 (allow, or deny with Slate's message).
hook_printed() {
  [ "$(cat "$WORK/hook-$1.code")" = 0 ] && [ ! -s "$WORK/hook-$1.err" ] || return 1
  python3 -c 'import json, sys
lines = open(sys.argv[1]).read().splitlines()
want = {"behavior": sys.argv[2]}
if sys.argv[2] == "deny":
    want["message"] = "denied from Slate"
want = {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": want}}
sys.exit(0 if len(lines) == 1 and json.loads(lines[0]) == want else 1)' \
    "$WORK/hook-$1.out" "$2"
}
# The answers store $1 records for session $2: surface/action/outcome, oldest first (desktop.sh's
# remote machine's answers are read with it too).
answers_in() {
  python3 -c 'import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute("SELECT surface, action, outcome FROM answers WHERE session_id = ? ORDER BY rowid", (sys.argv[2],)).fetchall()
print(" ".join("/".join(row) for row in rows))' "$1" "$2" 2>/dev/null
}

hook_checks() {
  local stand_in before
  mkdir -p "$HOOKED_DIR"
  # A `claude` started with no variable of any terminal or multiplexer: a plain terminal.
  (cd "$HOOKED_DIR" && exec env -i PATH=/usr/bin:/bin HOME="$HOME" "$WORK/bin/claude" 100000) \
    </dev/null >/dev/null 2>&1 &
  stand_in=$!
  pids+=("$stand_in")
  sleep 1 # the process must be older than the session's first line
  line "$HOOKED_DIR" "$HOOKED" '"type":"user","message":{"role":"user","content":"create two files"}' \
    >"$(transcript "$HOOKED_DIR" "$HOOKED")"
  hooked_menu() { [ "$(submenu "hooked · Claude Code — ")" = "Run: touch allowed.txt | Allow once | Deny | --- | Open" ]; }
  before="$(wc -l <"$NOTIFY_LOG")"
  hooked_asks toolu_h1 "touch allowed.txt"
  check "a waiting decision hook in a plain terminal gives the session a submenu: the summary, Allow once, Deny, Open" \
    eventually 20 hooked_menu
  # The notifications sent since $before (a count of lines of $NOTIFY_LOG) offer the stand-in's
  # dialog with Allow once and Deny.
  hooked_told() {
    local since
    since="$(tail -n "+$((before + 1))" "$NOTIFY_LOG" | grep -A12 '"hooked · Claude Code needs you"')"
    grep -q '"Allow once"' <<<"$since" && grep -q '"Deny"' <<<"$since"
  }
  check "its notification offers Allow once and Deny" eventually 10 hooked_told
  hook_waits() { ! hook_ended "$1" && [ ! -s "$WORK/hook-$1.out" ]; }
  check "the hook waits for the person: it runs and has printed nothing" hook_waits toolu_h1
  click_in "hooked · Claude Code — " "Allow once"
  check "the tray's Allow once ends the waiting hook" eventually 10 hook_ended toolu_h1
  check "which prints Claude Code's allow decision, and nothing else" hook_printed toolu_h1 allow
  check "the app's log says it answered from the tray" eventually 5 log_has "answered session=$HOOKED action=approve surface=tray"
  # What it says after: the agent's own hook took the answer (no screen to watch leave).
  hook_said() { tail -n "+$((before + 1))" "$NOTIFY_LOG" | grep -q 'Handed to the agent through its own hook'; }
  check "the notification that follows says the agent's hook took it" eventually 10 hook_said

  # Claude Code runs the allowed command and asks about the next one; its notification's Deny
  # (picked in dunst's context menu, which dunst invokes) answers that.
  line "$HOOKED_DIR" "$HOOKED" '"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_h1","content":""}]}' \
    >>"$(transcript "$HOOKED_DIR" "$HOOKED")"
  hooked_event PostToolUse "touch allowed.txt" toolu_h1 >"$WORK/hook-post.json"
  "$SLATE" hook claude-code PostToolUse <"$WORK/hook-post.json"
  dunstctl close-all
  hooked_menu() { [ "$(submenu "hooked · Claude Code — ")" = "Run: touch denied.txt | Allow once | Deny | --- | Open" ]; }
  before="$(wc -l <"$NOTIFY_LOG")"
  hooked_asks toolu_h2 "touch denied.txt"
  check "a second call waits with its own submenu" eventually 20 hooked_menu
  check "and its own notification, with Allow once and Deny" eventually 10 hooked_told
  check "the second hook waits for the person too" hook_waits toolu_h2
  printf '#Deny (hooked · Claude Code needs you)' >"$WORK/dunst-pick"
  dunstctl context >/dev/null 2>&1
  check "dunst's menu listed the notification's Deny" eventually 5 grep -qsF '#Deny (hooked · Claude Code needs you)' "$WORK/dunst-menu.txt"
  check "the notification's Deny ends the waiting hook" eventually 10 hook_ended toolu_h2
  check "which prints Claude Code's deny decision with \"denied from Slate\", and nothing else" hook_printed toolu_h2 deny
  check "the app's log says it answered from the notification" eventually 5 log_has "answered session=$HOOKED action=deny surface=notification"
  check "the store records both answers, from their surfaces, as taken by the hook" \
    test "$(answers_in "$XDG_DATA_HOME/slate/slate.db" "$HOOKED")" = "tray/approve/hook notification/deny/hook"
  printf '#Allow once (' >"$WORK/dunst-pick"
  # The stand-in ends, and its session with it.
  kill "$stand_in" 2>/dev/null
  wait "$stand_in" 2>/dev/null
}
