#!/usr/bin/env bash
# The desktop app, tested for real on a headless X server: Xvfb, a private D-Bus session, a
# StatusNotifierWatcher (the tray host side), dunst (the notification server), openbox and tmux,
# over a temporary HOME that holds two fixture Claude Code sessions run by fake `claude` processes
# in tmux panes. It reads the tray over D-Bus (label, icon pixels, menu), turns a session from
# Working to Needs you, marks a session hosted through the app's API, counts the Notify calls
# dbus-monitor sees, clicks menu items over dbusmenu, toggles start at login, clicks a notification
# with dunstctl (and one of a session on a headless Sway, whose foot window it focuses there),
# answers a stand-in Claude Code's permission dialog in a tmux pane from the notification's "Allow
# once" action (invoked through dunst's context menu, which emits ActionInvoked over D-Bus) and
# another's from the tray submenu's Deny, and two calls of one in a plain terminal through its
# decision hook, from the tray's Allow once and a notification's Deny (desktop-hook.sh), answers the
# same dialog on a remote machine (this one behind a private sshd on 127.0.0.1, with a HOME of its
# own) from the tray submenu's Allow once and from a notification's Deny, both forwarded over its
# SSH link, checks a second launch and that the window's WebKit processes run only while it is open,
# edits the config file while the app runs (a good edit applies, a broken one shows in the menu and
# the API; a remote machine that cannot be reached is named in the menu), restarts the app with a
# pause that holds across the restart (in the store and the menu), starts `slate serve` first and
# checks the app then uses it (no second engine, the same tray count and one notification), that
# `slate serve` refuses while the service or the app serves, naming it, and that the app takes over
# when the service stops; it takes screenshots into docs/screenshots/.
#
# Usage: src-tauri/tests/desktop.sh            (from anywhere; builds slate-app first)
#        src-tauri/tests/desktop.sh --smoke --app /usr/bin/slate-app
#          --app runs that binary instead of building one (the installed package's, in
#          scripts/package-test.sh); --smoke runs only the start (the tray appears with its count)
#          and one Working -> Needs you flip (the count follows, one notification fires), then a
#          finished turn under `reasons = ["permission", "question"]` (counted, not notified).
#          --hook runs the smoke run's start and flip, then the decision hook's answers instead.
# Prints one line per check and ends with `N passed, N failed`; exits non-zero on a failure.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=src-tauri/tests/private-desktop.sh
. "$ROOT/src-tauri/tests/private-desktop.sh"

if [ "${1:-}" != "--inside" ]; then
  SLATE_DESKTOP_APP=""
  SLATE_DESKTOP_SMOKE=""
  while [ "$#" -gt 0 ]; do
    case "$1" in
      --smoke) SLATE_DESKTOP_SMOKE=1 ;;
      --hook) SLATE_DESKTOP_SMOKE=hook ;;
      --app) SLATE_DESKTOP_APP="${2:?--app needs a path}"; shift ;;
      *) echo "usage: $0 [--smoke|--hook] [--app PATH]" >&2; exit 2 ;;
    esac
    shift
  done
  cd "$ROOT"
  if [ -z "$SLATE_DESKTOP_APP" ]; then
    # The debug build, in Cargo's target folder (<repo>/target, or CARGO_TARGET_DIR).
    # shellcheck source=scripts/target-dir.sh
    . "$ROOT/scripts/target-dir.sh"
    cargo build -p slate-app -p slate --locked --quiet || { echo "0 passed, 1 failed (build)"; exit 1; }
    SLATE_DESKTOP_APP="$CARGO_TARGET_DIR/debug/slate-app"
  fi
  export SLATE_DESKTOP_APP SLATE_DESKTOP_SMOKE
  private_desktop_run "$0" "$(mktemp -d /tmp/slate-desktop.XXXXXX)"
  status=$?
  [ "$status" -eq 97 ] && { echo "0 passed, 1 failed (Xvfb did not start)"; exit 1; }
  if [ "$status" -eq 0 ] && [ -z "${SLATE_KEEP_DESKTOP_TEST:-}" ]; then rm -rf "$WORK"; else echo "kept $WORK"; fi
  exit "$status"
fi

# ---- inside the private D-Bus session ----
cd "$ROOT"
APP="$SLATE_DESKTOP_APP"
# The command line beside the app: the debug slate built with it, or /usr/bin/slate of the package.
SLATE="$(dirname "$APP")/slate"
SMOKE="${SLATE_DESKTOP_SMOKE:-}"
LOG="$WORK/app.log"
NOTIFY_LOG="$WORK/notify.log"
# Screenshots go to the work folder; SLATE_SCREENSHOTS=docs/screenshots refreshes the committed ones.
SHOTS="${SLATE_SCREENSHOTS:-$WORK/screenshots}"
mkdir -p "$SHOTS"
passed=0
failed=0
pids=()

ok() { echo "ok   - $1"; passed=$((passed + 1)); }
bad() { echo "FAIL - $1"; failed=$((failed + 1)); }
check() { local name="$1"; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  [ -n "${app_pid:-}" ] && kill "$app_pid" 2>/dev/null
  tmux -S "$WORK/tmux.sock" kill-server 2>/dev/null
}
trap cleanup EXIT

# dunst's context menu (`dunstctl context`) hands the notifications' actions to its dmenu, one
# line each, `#Allow once (title) [id,allow]`: this one picks the newest line that holds what
# $WORK/dunst-pick says (the newest "Allow once" unless a check asks for another), which dunst
# then invokes, sending ActionInvoked to the app. What it was offered is kept to check.
mkdir -p "$WORK/bin" "$XDG_CONFIG_HOME/dunst"
cat >"$WORK/bin/pick-action" <<PICK
#!/bin/sh
tee "$WORK/dunst-menu.txt" | grep -F -- "\$(cat "$WORK/dunst-pick")" | tail -n 1
PICK
chmod +x "$WORK/bin/pick-action"
printf '#Allow once (' >"$WORK/dunst-pick"
printf '[global]\n    dmenu = %s\n' "$WORK/bin/pick-action" >"$XDG_CONFIG_HOME/dunst/dunstrc"
private_desktop_services "$NOTIFY_LOG"

# ---- fixture sessions: fake `claude` processes in tmux panes, then their transcripts ----
mkdir -p "$WORK/bin" "$HOME/code/acme-api" "$HOME/code/web"
cp "$(command -v sleep)" "$WORK/bin/claude"
TMUX_SOCKET="$WORK/tmux.sock"
tmux -S "$TMUX_SOCKET" new-session -d -s agents -n acme -c "$HOME/code/acme-api" "$WORK/bin/claude 100000"
tmux -S "$TMUX_SOCKET" new-window -t agents -n web -c "$HOME/code/web" "$WORK/bin/claude 100000"
ACME=de5c0001-0000-4000-8000-000000000001
WEB=de5c0002-0000-4000-8000-000000000002
ACME_DIR="$HOME/code/acme-api"
WEB_DIR="$HOME/code/web"
ACME_FILE="$(transcript "$ACME_DIR" "$ACME")"
WEB_FILE="$(transcript "$WEB_DIR" "$WEB")"
sleep 1 # the processes must be older than the sessions' first lines
{
  line "$ACME_DIR" "$ACME" '"type":"user","message":{"role":"user","content":"add rate limiting"}'
  line "$ACME_DIR" "$ACME" '"type":"ai-title","aiTitle":"Rate limiting"'
  line "$ACME_DIR" "$ACME" '"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"cargo test"}}]}'
} >"$ACME_FILE"
{
  line "$WEB_DIR" "$WEB" '"type":"user","message":{"role":"user","content":"speed up the charts"}'
  line "$WEB_DIR" "$WEB" '"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Done: the charts load lazily."}]}'
  line "$WEB_DIR" "$WEB" '"type":"system","subtype":"turn_duration","durationMs":900'
} >"$WEB_FILE"

# ---- helpers that read the tray over D-Bus ----
item=""
item_path=""
find_item() {
  local reply entry name pid
  reply="$(gdbus call --session -d org.kde.StatusNotifierWatcher -o /StatusNotifierWatcher \
    -m org.freedesktop.DBus.Properties.Get org.kde.StatusNotifierWatcher RegisteredStatusNotifierItems 2>/dev/null)"
  # The item that belongs to the app we started (an earlier run's may linger for a moment).
  for entry in $(printf '%s' "$reply" | grep -o "'[^']*'" | tr -d "'"); do
    name="${entry%%/*}"
    pid="$(gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus \
      -m org.freedesktop.DBus.GetConnectionUnixProcessID "$name" 2>/dev/null | grep -o '[0-9]*' | tail -1)"
    [ "$pid" = "$app_pid" ] || continue
    item="$name"
    case "$entry" in
      */*) item_path="/${entry#*/}" ;;
      *) item_path="$(gdbus introspect --session -d "$item" -o /org/ayatana/NotificationItem 2>/dev/null |
          grep -o 'node [A-Za-z_][^ ]*' | head -1 | cut -d' ' -f2)"
         [ -n "$item_path" ] || return 1
         item_path="/org/ayatana/NotificationItem/$item_path" ;;
    esac
    return 0
  done
  return 1
}
prop() { gdbus call --session -d "$item" -o "$item_path" -m org.freedesktop.DBus.Properties.Get org.kde.StatusNotifierItem "$1" 2>/dev/null; }
label() { prop XAyatanaLabel | sed -n "s/^(<'\(.*\)'>,)$/\1/p"; }
label_is() { [ "$(label)" = "$1" ]; }
icon_file() { prop IconName | sed -n "s/^(<'\(.*\)'>,)$/\1/p"; }
# The live icon equals the reference drawing of that count, pixel for pixel.
icon_shows() {
  local file reference
  file="$(icon_file)"
  reference="$ROOT/icons/tray/$1.png"
  [ -f "$file" ] || return 1
  [ "$(compare -metric AE "$file" "$reference" null: 2>&1)" = "0" ]
}
# The badge red (229,57,53) is somewhere in the icon.
icon_has_red() {
  local file
  file="$(icon_file)"
  convert "$file" -alpha off -fill black +opaque 'rgb(229,57,53)' -fill white -opaque 'rgb(229,57,53)' \
    -format '%[fx:maxima]' info: 2>/dev/null | grep -q '^1'
}
# The tray menu and the notifications, read over D-Bus (menu_id, click, submenu, notify_call, …).
# shellcheck source=desktop-menu.sh
. "$(dirname "${BASH_SOURCE[0]}")/desktop-menu.sh"
# shellcheck source=desktop-sway.sh
. "$(dirname "${BASH_SOURCE[0]}")/desktop-sway.sh"
# shellcheck source=desktop-hook.sh
. "$(dirname "${BASH_SOURCE[0]}")/desktop-hook.sh"
window_visible() { xdotool search --onlyvisible --name '^Slate$' >/dev/null 2>&1; }
some_webkit() { [ "$(webkit_count)" -gt 0 ]; }
log_has() { grep -q -- "$1" "$LOG"; }
start_app() {
  SLATE_LISTEN="${APP_LISTEN:-127.0.0.1:0}" "$APP" "$@" >>"$LOG" 2>&1 &
  app_pid=$!
  eventually 60 find_item
}

# ---- 1. start: the count of sessions already waiting, and no notification for them ----
start_app
check "the tray item registers with the StatusNotifierWatcher" test -n "$item_path"
check "the tray label shows 1 at start-up" eventually 20 label_is 1
check "the tray icon shows the 1-badge, pixel for pixel" icon_shows needs-1
check "the menu lists the waiting session with project, agent and reason" eventually 5 menu_has "web · Claude Code — "
has_app_actions() { menu_has "Open Slate" && menu_has "Pause notifications" && menu_has "Start at login" && menu_has "Quit Slate"; }
check "the menu has Open Slate, Pause notifications, Start at login and Quit" has_app_actions
sleep 3
check "no notification at start-up for a session already waiting" test "$(notify_count)" -eq 0

# Nothing of WebKit runs before the window is first opened, in a package too.
check "no WebKit process runs while the window has never been opened" no_webkit

# The smoke run goes straight from the start to the first flip.
if [ -z "$SMOKE" ]; then
  # ---- 2. a second launch shows the first one's window and exits ----
  window_hidden() { ! window_visible; }
  check "the app starts in the tray with its window hidden" window_hidden
  timeout 30 "$APP" >>"$WORK/second.log" 2>&1
  second_status=$?
  check "a second launch exits at once" test "$second_status" -eq 0
  check "a second launch shows the first one's window" eventually 10 window_visible
  check "the open window has its WebKit processes" eventually 10 some_webkit
  sleep 1
  import -window root "$SHOTS/app-window.png" 2>/dev/null
  wmctrl -c Slate
  check "closing the window closes it" eventually 5 window_hidden
  check "no WebKit process is alive after the window closes" eventually 10 no_webkit
  check "closing the window leaves the tray app running" kill -0 "$app_pid"
  click "Open Slate"
  check "Open Slate in the menu opens the window again" eventually 10 window_visible
  wmctrl -c Slate
  check "no WebKit process is alive after it closes again" eventually 10 no_webkit

  # ---- 2b. a hosted session: reported to the app's API the way `slate run` does, marked in the menu ----
  # The app listens on a free port and says which in its log; the token is in the config folder.
  api_base() { grep -o 'listening on http://127\.0\.0\.1:[0-9]*' "$LOG" | tail -1 | sed 's/^listening on //'; }
  # A read of sessions, remotes or settings needs the token too (docs/api.md).
  api_get() { curl -fsS -H "Authorization: Bearer $(cat "$XDG_CONFIG_HOME/slate/token")" "$(api_base)$1"; }
  report_hosted() { # session-id
    curl -fsS -o /dev/null -X POST "$(api_base)/hosted" \
      -H "Authorization: Bearer $(cat "$XDG_CONFIG_HOME/slate/token")" -H 'Content-Type: application/json' \
      -d "{\"agent\":\"claude-code\",\"session_id\":\"$1\",\"titles\":[],\"last_draw\":null}"
  }
  check "a hosted report for the waiting session is accepted" report_hosted "$WEB"
  check "the menu marks the hosted session" eventually 5 menu_has "web · Claude Code (hosted) — "
  plain_web_gone() { ! menu_has "web · Claude Code — "; }
  check "the hosted session is listed once, with its mark" plain_web_gone
  check "a hosted mark does not change the count" label_is 1

  # ---- 2c. the config file: an edit applies at once; a broken one is said in the menu and the API ----
  CONFIG="$XDG_CONFIG_HOME/slate/config.toml"
  health() { api_get "/health"; }
  idle_is() {
    health | python3 -c 'import json, sys
h = json.load(sys.stdin)
sys.exit(0 if h["settings"]["config"]["project-policy"]["session_idle_minutes"] == int(sys.argv[1]) else 1)' "$1"
  }
  printf '[project-policy]\nsession_idle_minutes = 7\n' >"$CONFIG"
  check "a config edit applies to the running app (session_idle_minutes)" eventually 10 idle_is 7
  printf '[project-policy]\nsesion_idle_minutes = 9\n' >"$CONFIG"
  check "a broken config edit is said first in the tray menu" eventually 10 menu_has "Config error: the config file"
  health_names_it() { health | grep -q 'sesion_idle_minutes' && health | grep -q "$CONFIG"; }
  check "the window's API names the key and the file" health_names_it
  check "a broken edit keeps the last good settings" idle_is 7
  rm -f "$CONFIG"
  no_config_note() { ! menu_has "Config error"; }
  check "the menu's note goes when the file reads again" eventually 10 no_config_note
  check "without the file the defaults apply" eventually 10 idle_is 20

  # ---- 2d. a remote machine that cannot be reached: named in the menu, counted nowhere ----
  # The system ssh runs for it, with a proxy command that fails at once: nothing leaves this machine.
  printf '[[remote]]\nname = "box"\ndestination = "box"\nssh_args = ["-F", "/dev/null", "-o", "ProxyCommand=false"]\n' >"$CONFIG"
  check "the menu names a remote machine that cannot be reached" eventually 15 menu_has "box is unreachable (since "
  remote_unreachable() { api_get "/remotes" | grep -q '"status":"unreachable"'; }
  check "the API says the remote is unreachable" remote_unreachable
  check "an unreachable remote changes no count" label_is 1
  rm -f "$CONFIG"
  no_remote_note() { ! menu_has "box is unreachable"; }
  check "the note goes with the remote" eventually 10 no_remote_note
fi

# ---- 3. Working -> Needs you: the count follows and exactly one notification ----
{
  line "$ACME_DIR" "$ACME" '"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok","is_error":false}]}'
  line "$ACME_DIR" "$ACME" '"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"All green."}]}'
  line "$ACME_DIR" "$ACME" '"type":"system","subtype":"turn_duration","durationMs":900'
} >>"$ACME_FILE"
check "the tray label follows to 2" eventually 10 label_is 2
check "the tray icon shows the 2-badge, pixel for pixel" icon_shows needs-2
check "the menu now lists the session that flipped" eventually 5 menu_has "acme-api · Claude Code — "
check "exactly one Notify after the flip" eventually 6 notified 1
sleep 3
check "still exactly one Notify after the burst window" test "$(notify_count)" -eq 1
check "the notification names project and agent" grep -q '"acme-api · Claude Code needs you"' "$NOTIFY_LOG"
silent() { notify_call "acme-api · Claude Code needs you" | grep -q 'member=Notify' && ! notify_call "acme-api · Claude Code needs you" | grep -q '"sound-name"'; }
check "it asks for no sound (none unless the config names one)" silent
check "and sets no urgency (normal; never critical)" no_urgency
check "the notification body gives the reason and the title" \
  bash -c "grep -A3 'acme-api · Claude Code needs you' '$NOTIFY_LOG' | grep -q 'Rate limiting'"
import -window root "$SHOTS/app-notification.png" 2>/dev/null

# ---- 3a. notify by reason: keeping only the dialogs, a finished turn counts and notifies nothing ----
# In the smoke run here; in the full run after the clicks of 4, whose notification it would
# otherwise outlast on dunst's screen.
CONFIG="$XDG_CONFIG_HOME/slate/config.toml"
api_at() { grep -o 'listening on http://127\.0\.0\.1:[0-9]*' "$LOG" | tail -1 | sed 's/^listening on //'; }
dialogs_only() {
  curl -fsS -H "Authorization: Bearer $(cat "$XDG_CONFIG_HOME/slate/token")" "$(api_at)/health" |
    grep -q '"reasons":\["permission","question"\]'
}
reasons_checks() {
  printf '[notifications]\nreasons = ["permission", "question"]\n' >"$CONFIG"
  check "the config's reasons apply to the running app" eventually 10 dialogs_only
  line "$ACME_DIR" "$ACME" '"type":"user","message":{"role":"user","content":"and the tests"}' >>"$ACME_FILE"
  check "a new prompt makes the session Working: the label goes back to 1" eventually 10 label_is 1
  told_before="$(notify_count)"
  line "$ACME_DIR" "$ACME" '"type":"system","subtype":"turn_duration","durationMs":900' >>"$ACME_FILE"
  check "kept only permission and question: the finished turn still counts (label 2)" eventually 10 label_is 2
  sleep 4
  check "and it sends no notification" test "$(notify_count)" -eq "$told_before"
  rm -f "$CONFIG"
}
if [ -n "$SMOKE" ]; then
  if [ "$SMOKE" = hook ]; then hook_checks; else reasons_checks; fi
  echo "$passed passed, $failed failed (${SMOKE/1/smoke})"
  [ "$failed" -eq 0 ]
  exit
fi

# ---- 4. clicks: a session in the menu, a notification ----
# The other agent's window is in front; the click must bring acme-api's tmux window back.
tmux -S "$TMUX_SOCKET" select-window -t agents:web
active_window() { [ "$(tmux -S "$TMUX_SOCKET" display -p -t agents '#{window_name}')" = "$1" ]; }
check "the other agent's window is in front before the click" active_window web
click "acme-api · Claude Code — "
check "a menu click on a session reaches the focus handler" eventually 5 log_has "focus requested session=$ACME"
check "the menu click brought the session's tmux window to the front" eventually 5 active_window acme
dunstctl action 0 >/dev/null 2>&1
focused_twice() { [ "$(grep -c "focus requested session=$ACME" "$LOG")" -ge 2 ]; }
check "a click on the notification reaches the focus handler" eventually 5 focused_twice
reasons_checks

# ---- 4b. answering: a stand-in Claude Code at a permission dialog in a tmux pane ----
# A program titled `claude` (so Slate takes it for Claude Code) in a 120x45 pane of the private
# tmux server draws Claude Code 2.1.332's recorded permission screen for `touch x.txt`, and acts
# as the real one does on the keys Slate sends: `1` runs the command and draws Claude Code at work,
# Escape rejects it and draws its composer (both recorded screens). Its transcript holds the open Bash call for the same command.
PROBE=de5c0003-0000-4000-8000-000000000003
PROBE_DIR="$HOME/code/probe"
PROBE_FILE="$(transcript "$PROBE_DIR" "$PROBE")"
mkdir -p "$PROBE_DIR"
cat >"$WORK/bin/claude-at-dialog" <<'STANDIN'
screen="$1"
# After the keys it draws the real CLI's own next screen (recorded beside the dialog): Slate counts
# an answer delivered only when the agent draws a screen of its own.
recorded="$(dirname "$screen")"
printf '\033[H\033[2J'
cat "$screen"
while IFS= read -rsn1 key; do
  case "$key" in
    1) touch x.txt; printf '\033[H\033[2J'; cat "$recorded/working-sleep.txt"; break ;;
    $'\e') printf '\033[H\033[2J'; cat "$recorded/idle.txt"; break ;;
  esac
done
# The agent goes on running after the dialog, as Claude Code does.
while :; do read -r _ || sleep 1; done
STANDIN
PROBE_SCREEN="$ROOT/fixtures/screens/claude-code/2.1.332/permission-touch.txt"
tmux -S "$TMUX_SOCKET" new-session -d -s probe -x 120 -y 45 -c "$PROBE_DIR" \
  "exec -a claude bash '$WORK/bin/claude-at-dialog' '$PROBE_SCREEN'"
sleep 1 # the process must be older than the session's first line
{
  line "$PROBE_DIR" "$PROBE" '"type":"user","message":{"role":"user","content":"create a probe file"}'
  line "$PROBE_DIR" "$PROBE" '"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_p","name":"Bash","input":{"command":"touch x.txt","description":"Create a probe file"}}]}'
} >"$PROBE_FILE"
before="$(notify_count)"
probe_menu() { [ "$(submenu "probe · Claude Code — ")" = "Run: touch x.txt | Allow once | Deny | --- | Open" ]; }
check "the tray gives the session at the dialog a submenu: the summary, Allow once, Deny, Open (nothing that widens)" eventually 20 probe_menu
probe_told() { [ "$(notify_count)" -eq $((before + 1)) ] && grep -A12 '"probe · Claude Code needs you"' "$NOTIFY_LOG" | grep -q '"Allow once"'; }
check "the dialog's notification offers Allow once (dunst shows actions)" eventually 10 probe_told
offered_deny_open() { grep -A12 '"probe · Claude Code needs you"' "$NOTIFY_LOG" | grep -q '"Deny"' && grep -A12 '"probe · Claude Code needs you"' "$NOTIFY_LOG" | grep -q '"Open"'; }
check "it offers Deny and Open too" offered_deny_open
check "the file is not there before the answer" test ! -e "$PROBE_DIR/x.txt"
dunstctl context >/dev/null 2>&1
check "dunst's menu listed the notification's Allow once" eventually 5 grep -qs '^#Allow once (probe · Claude Code needs you)' "$WORK/dunst-menu.txt"
check "Allow once on the notification runs the command: the file appears" eventually 10 test -e "$PROBE_DIR/x.txt"
dialog_gone() { ! tmux -S "$TMUX_SOCKET" capture-pane -p -t probe | grep -q 'Do you want to proceed?'; }
check "the dialog leaves the pane" eventually 5 dialog_gone
check "the app's log says it answered from the notification" eventually 10 log_has "answered session=.*surface=notification"
no_probe_menu() { ! probe_menu; }
check "the submenu goes with the dialog" eventually 10 no_probe_menu
told_allowed() { grep -q '"Allowed once: probe · Claude Code"' "$NOTIFY_LOG"; }
check "the outcome is told in a notification" eventually 5 told_allowed
# The stand-in ends, and its session with it: the counts below are the two fixture sessions'.
tmux -S "$TMUX_SOCKET" kill-session -t probe

# A second stand-in at the same dialog, denied from the tray's submenu: the dialog leaves and
# the command never runs.
DENIED=de5c0004-0000-4000-8000-000000000004
DENIED_DIR="$HOME/code/denied"
DENIED_FILE="$(transcript "$DENIED_DIR" "$DENIED")"
mkdir -p "$DENIED_DIR"
tmux -S "$TMUX_SOCKET" new-session -d -s denied -x 120 -y 45 -c "$DENIED_DIR" \
  "exec -a claude bash '$WORK/bin/claude-at-dialog' '$PROBE_SCREEN'"
sleep 1
{
  line "$DENIED_DIR" "$DENIED" '"type":"user","message":{"role":"user","content":"create a probe file"}'
  line "$DENIED_DIR" "$DENIED" '"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_d","name":"Bash","input":{"command":"touch x.txt","description":"Create a probe file"}}]}'
} >"$DENIED_FILE"
denied_menu() { [ "$(submenu "denied · Claude Code — ")" = "Run: touch x.txt | Allow once | Deny | --- | Open" ]; }
check "the second session at the dialog gets its submenu" eventually 20 denied_menu
click "Deny"
denied_gone() { ! tmux -S "$TMUX_SOCKET" capture-pane -p -t denied | grep -q 'Do you want to proceed?'; }
check "Deny in the tray's submenu makes the dialog leave the pane" eventually 10 denied_gone
check "the app's log says it answered from the tray" eventually 10 log_has "answered session=.*action=deny surface=tray"
told_denied() { grep -q '"Denied: denied · Claude Code"' "$NOTIFY_LOG"; }
check "the tray's answer is told in a notification" eventually 5 told_denied
sleep 1
check "the denied command never ran" test ! -e "$DENIED_DIR/x.txt"
tmux -S "$TMUX_SOCKET" kill-session -t denied
hook_checks # the same answers through Claude Code's decision hook, in a plain terminal

# ---- 4c. a dialog on another machine: the same answers in the tray and a notification, forwarded there ----
# The machine `box` is this one, reached through a private sshd on 127.0.0.1 (throwaway keys, a
# free port) whose one account forces box's own HOME and puts the slate under test first on its
# PATH, as tests/sshd.rs does for the engine's tests. The app follows box with the system ssh,
# `-F` the test's client config, so neither ~/.ssh nor /etc/ssh is read and nothing leaves this
# machine. Box's stand-in Claude Code agents draw their permission dialog in panes of the private
# tmux server, their transcripts in box's HOME; box's own Slate (run by the link and, for an
# answer, by `slate remote-call`) reads those panes and types into them.
SSHD_DIR="$WORK/sshd"
BOX_HOME="$WORK/box-home"
SSHD_PROGRAM="$(command -v sshd || echo /usr/sbin/sshd)"
mkdir -p "$SSHD_DIR" "$BOX_HOME/.config/slate"
# Box's own slate looks for no server of its own: `slate watch` runs its own engine.
printf '[server]\nlisten = "127.0.0.1:0"\n' >"$BOX_HOME/.config/slate/config.toml"
start_box_sshd() {
  [ -x "$SSHD_PROGRAM" ] || { echo "note: sshd is not installed (openssh-server)"; return 1; }
  SSH_PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  ssh-keygen -q -t ed25519 -N '' -C slate-desktop-test -f "$SSHD_DIR/host_key" || return 1
  ssh-keygen -q -t ed25519 -N '' -C slate-desktop-test -f "$SSHD_DIR/box_key" || return 1
  cat >"$SSHD_DIR/box.sh" <<BOX
#!/bin/sh
# Box's remote environment: its own HOME, and the slate under test first on its PATH.
export HOME='$BOX_HOME' XDG_CONFIG_HOME='$BOX_HOME/.config' XDG_DATA_HOME='$BOX_HOME/.local/share'
export PATH='$(dirname "$SLATE")':/usr/bin:/bin
exec /bin/sh -c "\$SSH_ORIGINAL_COMMAND"
BOX
  chmod +x "$SSHD_DIR/box.sh"
  printf 'command="%s",no-port-forwarding,no-agent-forwarding,no-X11-forwarding,no-pty %s\n' \
    "$SSHD_DIR/box.sh" "$(cat "$SSHD_DIR/box_key.pub")" >"$SSHD_DIR/authorized_keys"
  printf '[127.0.0.1]:%s %s\n' "$SSH_PORT" "$(cat "$SSHD_DIR/host_key.pub")" >"$SSHD_DIR/known_hosts"
  cat >"$SSHD_DIR/ssh_config" <<CLIENT
Host box
  HostName 127.0.0.1
  Port $SSH_PORT
  User $(id -un)
  IdentityFile $SSHD_DIR/box_key
  IdentitiesOnly yes
  UserKnownHostsFile $SSHD_DIR/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  PasswordAuthentication no
  KbdInteractiveAuthentication no
  ControlMaster no
  ControlPath none
  LogLevel ERROR
CLIENT
  # A shell sshd starts at level 1 would read the login user's ~/.bashrc, which is not this
  # test's to run; deeper shells do not.
  cat >"$SSHD_DIR/sshd_config" <<SERVER
ListenAddress 127.0.0.1
Port $SSH_PORT
HostKey $SSHD_DIR/host_key
AuthorizedKeysFile $SSHD_DIR/authorized_keys
PidFile $SSHD_DIR/sshd.pid
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AllowTcpForwarding no
X11Forwarding no
AllowAgentForwarding no
PermitTTY no
LogLevel ERROR
SetEnv SHLVL=5
SERVER
  # Newer servers hold back a source whose connections misbehave: every one here is 127.0.0.1.
  if "$SSHD_PROGRAM" -t -f "$SSHD_DIR/sshd_config" -o PerSourcePenalties=no 2>/dev/null; then
    echo 'PerSourcePenalties no' >>"$SSHD_DIR/sshd_config"
  fi
  [ "$(id -u)" -ne 0 ] || mkdir -p /run/sshd
  "$SSHD_PROGRAM" -D -e -f "$SSHD_DIR/sshd_config" 2>>"$SSHD_DIR/sshd.log" &
  sshd_pid=$!
  pids+=("$sshd_pid")
  eventually 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$SSH_PORT" 2>/dev/null
}
check "a private sshd serves the machine box on 127.0.0.1" start_box_sshd
box_answers() { ssh -F "$SSHD_DIR/ssh_config" box slate --version </dev/null >/dev/null 2>&1; }
check "box answers over ssh with the slate under test" box_answers
# With a sound asked for, from here on: the notifications carry its name as a hint.
printf '[notifications]\nsound = "message-new-instant"\n\n[[remote]]\nname = "box"\ndestination = "box"\nssh_args = ["-F", "%s"]\n' "$SSHD_DIR/ssh_config" >"$CONFIG"
box_connected() { api_get "/remotes" | grep -q '"status":"connected"'; }
check "the app follows box over its link" eventually 30 box_connected

# The status this machine's API gives box's session $1 is $2.
box_session_is() {
  api_get "/sessions/box:$1" 2>/dev/null |
    python3 -c '
import json, sys
try:
    s = json.load(sys.stdin)["session"]
except (ValueError, KeyError):
    sys.exit(1)  # not listed yet: curl printed nothing
sys.exit(0 if s["machine"] == "box" and s["status"] == sys.argv[1] else 1)' "$2"
}
# A stand-in Claude Code at the permission dialog on box: tmux session $1, folder $2, session id $3.
# It starts at work (the link is up), then asks: the flip is box's, told here.
start_box_agent() {
  local dir="$WORK/box-code/$2" file
  mkdir -p "$dir"
  file="$(HOME="$BOX_HOME" transcript "$dir" "$3")"
  tmux -S "$TMUX_SOCKET" new-session -d -s "$1" -x 120 -y 45 -c "$dir" \
    "exec -a claude bash '$WORK/bin/claude-at-dialog' '$PROBE_SCREEN'"
  sleep 1 # the process must be older than the session's first line
  line "$dir" "$3" '"type":"user","message":{"role":"user","content":"create a probe file"}' >"$file"
  eventually 30 box_session_is "$3" working || return 1
  line "$dir" "$3" '"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_b","name":"Bash","input":{"command":"touch x.txt","description":"Create a probe file"}}]}' >>"$file"
}
box_dialog_gone() { ! tmux -S "$TMUX_SOCKET" capture-pane -p -t "$1" | grep -q 'Do you want to proceed?'; }

BOX_A=b0c5a001-0000-4000-8000-00000000b0c5
before="$(notify_count)"
check "box's first stand-in is listed, at work" start_box_agent box-a api-server "$BOX_A"
box_menu() { [ "$(submenu "box · api-server · Claude Code — ")" = "Run: touch x.txt | Allow once | Deny | --- | Open" ]; }
check "the tray gives box's session at the dialog the same submenu: the summary, Allow once, Deny, Open" eventually 30 box_menu
box_told() { [ "$(notify_count)" -eq $((before + 1)) ] && grep -A12 '"box · api-server · Claude Code needs you"' "$NOTIFY_LOG" | grep -q '"Allow once"'; }
check "box's dialog is notified once, naming the machine, with Allow once" eventually 10 box_told
box_offers() { grep -A12 '"box · api-server · Claude Code needs you"' "$NOTIFY_LOG" | grep -q '"Deny"' && grep -A12 '"box · api-server · Claude Code needs you"' "$NOTIFY_LOG" | grep -q '"Open"'; }
check "and with Deny and Open" box_offers
box_sounds() { notify_call "box · api-server · Claude Code needs you" | grep -A1 'string "sound-name"' | grep -q 'string "message-new-instant"'; }
check "with the config's sound, as the notification's sound-name hint" box_sounds
check "no notification so far sets an urgency (normal; never critical)" no_urgency
check "the file is not on box before the answer" test ! -e "$WORK/box-code/api-server/x.txt"
click_in "box · api-server · Claude Code — " "Allow once"
check "Allow once in box's submenu is forwarded there: the command runs on box" eventually 25 test -e "$WORK/box-code/api-server/x.txt"
check "the dialog leaves box's pane" eventually 5 box_dialog_gone box-a
check "the app's log says it answered box's session from the tray" eventually 10 log_has "answered session=$BOX_A action=approve surface=tray"
told_box_allowed() { grep -q '"Allowed once: box · api-server · Claude Code"' "$NOTIFY_LOG"; }
check "the forwarded answer's outcome is told in a notification" eventually 5 told_box_allowed
no_box_menu() { ! box_menu; }
check "box's submenu goes with its dialog" eventually 15 no_box_menu
# Both stores hold the answer: this machine's under box:ID, from the tray; box's under its id.
check "this machine records the answer under box:ID" test "$(answers_in "$XDG_DATA_HOME/slate/slate.db" "box:$BOX_A")" = "tray/approve/answered"
box_recorded() { answers_in "$BOX_HOME/.local/share/slate/slate.db" "$BOX_A" | grep -q '/approve/answered$'; }
check "box's Slate records the answer it carried out" box_recorded

# A second stand-in on box, denied from its notification: dunst's context menu picks that
# notification's Deny, which dunst invokes (ActionInvoked), and the app forwards it.
BOX_B=b0c5b002-0000-4000-8000-00000000b0c5
before="$(notify_count)"
check "box's second stand-in is listed, at work" start_box_agent box-b web-server "$BOX_B"
box_b_told() { [ "$(notify_count)" -eq $((before + 1)) ] && grep -A12 '"box · web-server · Claude Code needs you"' "$NOTIFY_LOG" | grep -q '"Deny"'; }
check "its dialog is notified with Deny" eventually 30 box_b_told
printf '#Deny (box · web-server · Claude Code needs you)' >"$WORK/dunst-pick"
dunstctl context >/dev/null 2>&1
check "dunst's menu listed that notification's Deny" eventually 5 grep -qsF '#Deny (box · web-server · Claude Code needs you)' "$WORK/dunst-menu.txt"
check "Deny on the notification is forwarded to box: the dialog leaves its pane" eventually 25 box_dialog_gone box-b
check "the app's log says it answered box's session from the notification" eventually 10 log_has "answered session=$BOX_B action=deny surface=notification"
told_box_denied() { grep -q '"Denied: box · web-server · Claude Code"' "$NOTIFY_LOG"; }
check "the outcome is told in a notification" eventually 5 told_box_denied
sleep 1
check "the denied command never ran on box" test ! -e "$WORK/box-code/web-server/x.txt"
printf '#Allow once (' >"$WORK/dunst-pick"

# Box goes: its stand-ins end, the remote leaves the config, its sessions leave the menu.
tmux -S "$TMUX_SOCKET" kill-session -t box-a
tmux -S "$TMUX_SOCKET" kill-session -t box-b
rm -f "$CONFIG"
no_box_sessions() { ! menu_has "box · "; }
check "box's sessions leave the menu with the remote" eventually 15 no_box_sessions
[ -n "${sshd_pid:-}" ] && kill "$sshd_pid" 2>/dev/null

# ---- 5. start at login ----
click "Start at login"
check "Start at login writes the autostart entry" eventually 5 bash -c "ls '$HOME'/.config/autostart/*.desktop >/dev/null 2>&1"
check "the autostart entry starts the app hidden" bash -c "grep -q -- '--hidden' '$HOME'/.config/autostart/*.desktop"
click "Start at login"
check "Start at login again removes it" eventually 5 bash -c "! ls '$HOME'/.config/autostart/*.desktop >/dev/null 2>&1"

# ---- 6. nothing needs you: the calm icon ----
line "$ACME_DIR" "$ACME" '"type":"user","message":{"role":"user","content":"now the docs"}' >>"$ACME_FILE"
line "$WEB_DIR" "$WEB" '"type":"user","message":{"role":"user","content":"and the tables"}' >>"$WEB_FILE"
check "the tray label follows to 0" eventually 10 label_is 0
check "the tray icon shows no badge, pixel for pixel" icon_shows needs-0
no_red() { ! icon_has_red; }
check "the calm icon has no badge red" no_red

# ---- 6b. a notification click on Wayland, and quiet while you look there (desktop-sway.sh) ----
sway_checks

# ---- 7. paused: a flip is not told, then Resume is offered until clicked ----
before="$(notify_count)"
click "Until resumed"
check "Pause notifications until resumed offers Resume in the menu" eventually 5 menu_has "Resume notifications"
{
  line "$WEB_DIR" "$WEB" '"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Tables renamed."}]}'
  line "$WEB_DIR" "$WEB" '"type":"system","subtype":"turn_duration","durationMs":900'
} >>"$WEB_FILE"
check "a flip while paused still moves the count" eventually 10 label_is 1
sleep 3
check "a flip while paused sends no notification" test "$(notify_count)" -eq "$before"
click "Resume notifications"
check "Resume brings Pause notifications back" eventually 5 menu_has "Pause notifications"
line "$WEB_DIR" "$WEB" '"type":"user","message":{"role":"user","content":"one more thing"}' >>"$WEB_FILE"
check "the count is back to 0" eventually 10 label_is 0

# ---- 7b. muted: a flip moves the count and is not told; the mute is kept in the store ----
# The notification of one session of this machine offers Mute, which dunst invokes.
{
  line "$WEB_DIR" "$WEB" '"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Columns renamed."}]}'
  line "$WEB_DIR" "$WEB" '"type":"system","subtype":"turn_duration","durationMs":900'
} >>"$WEB_FILE"
web_offers_mute() { notify_call "web · Claude Code (hosted) needs you" | grep -q '"Mute"'; }
check "a session's notification offers Mute" eventually 10 web_offers_mute
printf '#Mute (web · Claude Code (hosted) needs you)' >"$WORK/dunst-pick"
dunstctl context >/dev/null 2>&1
check "dunst's menu listed the notification's Mute" eventually 5 grep -qsF '#Mute (web · Claude Code (hosted) needs you)' "$WORK/dunst-menu.txt"
muted_in_app() { # session-id: the app's API says it is muted
  api_get "/sessions/$1" |
    python3 -c 'import json, sys; sys.exit(0 if json.load(sys.stdin)["session"].get("muted") is True else 1)'
}
check "Mute on the notification mutes the session" eventually 10 muted_in_app "$WEB"
mutes_logged() { [ "$(grep -c "muted from the tray or a notification" "$LOG")" -ge "$1" ]; }
check "the app's log says it muted from the notification" eventually 10 mutes_logged 1
# The app listens on a free port here (SLATE_LISTEN), which SLATE_API names to the command line,
# as the config's port would.
check "slate unmute unmutes it" env SLATE_API="$(api_base)" "$SLATE" unmute "$WEB"
unmuted_in_app() { ! muted_in_app "$1"; }
check "and the app's engine says so" eventually 10 unmuted_in_app "$WEB"
line "$WEB_DIR" "$WEB" '"type":"user","message":{"role":"user","content":"the views too"}' >>"$WEB_FILE"
check "the count is back to 0 once more" eventually 10 label_is 0
before="$(notify_count)"
check "slate mute mutes a session of the running app" env SLATE_API="$(api_base)" "$SLATE" mute "$WEB"
check "the app's engine says so at once" eventually 10 muted_in_app "$WEB"
{
  line "$WEB_DIR" "$WEB" '"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"One more done."}]}'
  line "$WEB_DIR" "$WEB" '"type":"system","subtype":"turn_duration","durationMs":900'
} >>"$WEB_FILE"
check "a muted session's flip still moves the count" eventually 10 label_is 1
sleep 3
check "a muted session's flip sends no notification" test "$(notify_count)" -eq "$before"
check "the tray's Mute notifications for lists the session, ticked" eventually 10 ticked "web · Claude Code (hosted)"
click_in "Mute notifications for" "web · Claude Code (hosted)"
check "a click there unmutes it" eventually 10 unmuted_in_app "$WEB"
check "and the tick goes" eventually 10 unticked "web · Claude Code (hosted)"
click_in "Mute notifications for" "web · Claude Code (hosted)"
check "a second click mutes it again" eventually 10 muted_in_app "$WEB"
check "the app's log says the tray unmuted and muted it" eventually 10 mutes_logged 3
line "$WEB_DIR" "$WEB" '"type":"user","message":{"role":"user","content":"and the index"}' >>"$WEB_FILE"
check "the count is back to 0 again" eventually 10 label_is 0

# ---- 8. restart: no notification at start-up, and a pause holds across it ----
before="$(notify_count)"
click "Until resumed"
check "pausing again offers Resume" eventually 5 menu_has "Resume notifications"
STORE="$XDG_DATA_HOME/slate/slate.db"
kept_pause() { # until_ms, or "null" for until resumed; nothing when no pause is kept
  python3 -c 'import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute("SELECT until_ms FROM notification_pause").fetchall()
print("\n".join("null" if until is None else str(until) for (until,) in rows))' "$STORE"
}
check "the pause is kept in Slate's store" test "$(kept_pause)" = null
click "Quit Slate"
check "Quit in the menu ends the app" eventually 10 bash -c "! kill -0 $app_pid 2>/dev/null"
{
  line "$ACME_DIR" "$ACME" '"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Docs done."}]}'
  line "$ACME_DIR" "$ACME" '"type":"system","subtype":"turn_duration","durationMs":900'
} >>"$ACME_FILE"
item=""
item_path=""
start_app
check "after a restart the tray shows the session that finished meanwhile" eventually 20 label_is 1
check "after a restart notifications are still paused" eventually 5 menu_has "Resume notifications (paused)"
sleep 4
check "a restart sends no notification" test "$(notify_count)" -eq "$before"
check "the icon after the restart has the badge red" icon_has_red
click "Resume notifications"
check "Resume after the restart brings Pause notifications back" eventually 5 menu_has "Pause notifications"
check "resuming removes the kept pause" test -z "$(kept_pause)"
check "the mute holds across the restart" eventually 10 muted_in_app "$WEB"
check "slate unmute unmutes it after the restart" env SLATE_API="$(api_base)" "$SLATE" unmute "$WEB"
check "and the app's engine says so after the restart" eventually 10 unmuted_in_app "$WEB"

# ---- 9. the demo plays every state in its own temporary HOME ----
before="$(notify_count)"
click "Quit Slate"
eventually 10 bash -c "! kill -0 $app_pid 2>/dev/null"
mkdir -p "$WORK/tmp"
item=""
item_path=""
TMPDIR="$WORK/tmp" start_app --demo
check "the demo starts with its window shown" eventually 10 window_visible
check "the demo reaches three sessions needing you" eventually 40 label_is 3
demo_notified() { [ "$(notify_count)" -eq $((before + 3)) ]; }
check "the demo's three flips give three notifications" eventually 5 demo_notified
check "the demo lists its permission prompt in the menu" menu_has "acme-api · Claude Code — Asks permission for Edit"
import -window root "$SHOTS/app-demo.png" 2>/dev/null
click "Quit Slate"
demo_gone() { ! kill -0 "$app_pid" 2>/dev/null && [ -z "$(ls -A "$WORK/tmp")" ]; }
check "quitting the demo removes its temporary HOME" eventually 10 demo_gone
check "quitting closes the open window and its WebKit processes" eventually 10 no_webkit

# ---- 10. one engine per user: the app uses a running `slate serve`, and takes over when it stops ----
# The TCP ports process $1 listens on, from the socket inodes it holds and the kernel's tables.
listening_ports() {
  python3 -c 'import os, sys
pid = sys.argv[1]
inodes = set()
for fd in os.listdir(f"/proc/{pid}/fd"):
    try:
        target = os.readlink(f"/proc/{pid}/fd/{fd}")
    except OSError:
        continue
    if target.startswith("socket:["):
        inodes.add(target[8:-1])
for table in ("/proc/net/tcp", "/proc/net/tcp6"):
    with open(table) as lines:
        next(lines)
        for row in lines:
            fields = row.split()
            if fields[3] == "0A" and fields[9] in inodes:
                print(int(fields[1].rsplit(":", 1)[1], 16))' "$1"
}
# How many descriptors process $1 holds on Slate's store.
store_descriptors() { find "/proc/$1/fd" -lname "$STORE*" 2>/dev/null | wc -l; }
PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$SLATE" serve --listen "127.0.0.1:$PORT" >"$WORK/serve.log" 2>&1 &
serve_pid=$!
pids+=("$serve_pid")
serving() { grep -qs "listening on http://127.0.0.1:$PORT" "$WORK/serve.log"; }
check "slate serve listens on port $PORT" eventually 20 serving
# Which Slate answers on the port, as its /health says: "$(health_says kind) $(health_says pid)".
health_says() { curl -fsS -H "Authorization: Bearer $(cat "$XDG_CONFIG_HOME/slate/token")" "http://127.0.0.1:$PORT/health" | python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
check "the service's /health says it is the service, with its pid" \
  test "$(health_says kind) $(health_says pid)" = "service $serve_pid"
before="$(notify_count)"
item=""
item_path=""
APP_LISTEN="127.0.0.1:$PORT" start_app
check "the app with the service running shows the count" eventually 20 label_is 1
check "the menu says the app uses the Slate service" eventually 5 menu_has "Using the Slate service"
check "the app's log says it uses the service" eventually 5 log_has "using the Slate service"
check "the app opens no listener of its own" test -z "$(listening_ports "$app_pid")"
check "the app holds no descriptor on the store (the service is its one writer)" test "$(store_descriptors "$app_pid")" -eq 0
check "the API on the port is still the service's, not a second engine's" \
  test "$(health_says kind) $(health_says pid)" = "service $serve_pid"
check "the service holds the store" test "$(store_descriptors "$serve_pid")" -gt 0
{
  line "$WEB_DIR" "$WEB" '"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Tables done."}]}'
  line "$WEB_DIR" "$WEB" '"type":"system","subtype":"turn_duration","durationMs":900'
} >>"$WEB_FILE"
check "a flip the service sees moves the app's tray to 2" eventually 10 label_is 2
check "the tray icon follows the service's count to the 2-badge, pixel for pixel" icon_shows needs-2
check "the menu lists the session the service saw flip" eventually 5 menu_has "web · Claude Code — "
one_more() { [ "$(notify_count)" -eq $((before + 1)) ]; }
check "the app notifies the service's flip exactly once" eventually 6 one_more
sleep 3
check "still exactly one after the burst window" one_more
web_told() { grep -c '"web · Claude Code needs you"' "$NOTIFY_LOG"; }
check "the notification names the session" test "$(web_told)" -eq 1
second="$("$SLATE" serve --listen "127.0.0.1:$PORT" 2>&1)"
second_status=$?
check "a second slate serve exits with 3" test "$second_status" -eq 3
check "a second slate serve names the first" \
  test "$second" = "slate: another \`slate serve\` already serves on 127.0.0.1:$PORT (pid $serve_pid); it is this user's engine, so this one does not start"
line "$ACME_DIR" "$ACME" '"type":"user","message":{"role":"user","content":"and the changelog"}' >>"$ACME_FILE"
check "a new prompt the service sees moves the app's tray to 1" eventually 10 label_is 1

# The service stops: the app says so and waits for it; meanwhile a session turns to Needs you,
# with nothing watching. When the service stays away, the app runs its own engine on the same
# port, and the flip made meanwhile is notified then, once.
kill "$serve_pid"
check "the menu says the service is not answering" eventually 10 menu_has "The Slate service is not answering"
{
  line "$ACME_DIR" "$ACME" '"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Changelog done."}]}'
  line "$ACME_DIR" "$ACME" '"type":"system","subtype":"turn_duration","durationMs":900'
} >>"$ACME_FILE"
check "the app runs its own engine when the service stays away" eventually 30 menu_has "The Slate service stopped: Slate runs its own engine"
app_listens_on_port() { listening_ports "$app_pid" | grep -qx "$PORT"; }
check "the app's engine listens on the service's port" eventually 5 app_listens_on_port
check "the app's engine counts the flip made while the service was away" eventually 10 label_is 2
two_more() { [ "$(notify_count)" -eq $((before + 2)) ]; }
check "the flip made while the service was away is notified" eventually 6 two_more
sleep 3
check "once" two_more
refused="$("$SLATE" serve --listen "127.0.0.1:$PORT" 2>&1)"
refused_status=$?
check "slate serve does not start while the app serves" test "$refused_status" -eq 3
check "slate serve names the app and its pid" \
  test "$refused" = "slate: the Slate app already serves on 127.0.0.1:$PORT (pid $app_pid); it is this user's engine, so this one does not start"
check "the port's /health now says it is the app, with the app's pid" \
  test "$(health_says kind) $(health_says pid)" = "app $app_pid"
click "Quit Slate"
check "Quit ends the app" eventually 10 bash -c "! kill -0 $app_pid 2>/dev/null"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
