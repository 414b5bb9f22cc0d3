# A private desktop for the real app, sourced by src-tauri/tests/desktop.sh and
# src-tauri/benches/memory.sh: a temporary HOME, a headless X server, a private D-Bus session with
# a StatusNotifierWatcher (the tray host side), dunst (the notification server) and openbox, and
# the way a Claude Code transcript line is written. It defines functions only.

# Retries a command for up to $1 seconds.
eventually() {
  local seconds="$1"; shift
  local until=$((SECONDS + seconds))
  while [ "$SECONDS" -le "$until" ]; do "$@" && return 0; sleep 0.25; done
  return 1
}

# Runs "$1 --inside" in a private desktop over a temporary HOME under $2 (exported as WORK), and
# returns its status; 97 when Xvfb did not start.
private_desktop_run() {
  local script="$1" status xvfb display_number
  export WORK="$2"
  export HOME="$WORK/home"
  export XDG_RUNTIME_DIR="$WORK/run" XDG_CONFIG_HOME="$HOME/.config" XDG_CACHE_HOME="$HOME/.cache" \
    XDG_DATA_HOME="$HOME/.local/share" XDG_STATE_HOME="$HOME/.local/state"
  mkdir -p "$HOME" "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
  unset CLAUDE_CONFIG_DIR CODEX_HOME GEMINI_CLI_HOME OPENCODE_DB CURSOR_CONFIG_DIR TMUX
  # Xvfb picks a free display number itself and reports it on the given file descriptor.
  exec 5<> <(:)
  Xvfb -displayfd 5 -screen 0 1280x800x24 -nolisten tcp >"$WORK/xvfb.log" 2>&1 &
  xvfb=$!
  read -r -t 20 display_number <&5 || return 97
  export DISPLAY=":$display_number"
  dbus-run-session -- "$script" --inside
  status=$?
  kill "$xvfb" 2>/dev/null
  wait "$xvfb" 2>/dev/null
  return "$status"
}

# Inside the private session: starts openbox, a dbus-monitor that logs every Notify call into $1,
# the StatusNotifierWatcher and dunst, adds their pids to the caller's `pids`, and waits for their
# names on the bus.
private_desktop_services() {
  openbox >"$WORK/openbox.log" 2>&1 & pids+=($!)
  dbus-monitor --session "type='method_call',interface='org.freedesktop.Notifications',member='Notify'" \
    >"$1" 2>&1 & pids+=($!)
  status-notifier-watcher >"$WORK/watcher.log" 2>&1 & pids+=($!)
  dunst >"$WORK/dunst.log" 2>&1 & pids+=($!)
  eventually 20 owned org.kde.StatusNotifierWatcher || echo "note: no StatusNotifierWatcher on the bus"
  eventually 20 owned org.freedesktop.Notifications || echo "note: no notification server on the bus"
}
owned() { gdbus call --session -d org.freedesktop.DBus -o /org/freedesktop/DBus -m org.freedesktop.DBus.NameHasOwner "$1" 2>/dev/null | grep -q true; }

# The transcript file of Claude Code session $2 working in folder $1 (its folder is created).
transcript() {
  local dir="$HOME/.claude/projects/$(printf '%s' "$1" | tr -c 'a-zA-Z0-9' '-')"
  mkdir -p "$dir"
  printf '%s' "$dir/$2.jsonl"
}
# One transcript line of session $2 in folder $1, with the JSON fields $3, stamped now.
line() {
  printf '{"cwd":"%s","sessionId":"%s","version":"2.1.332","uuid":"u-%s","timestamp":"%s",%s}\n' \
    "$1" "$2" "$RANDOM$RANDOM" "$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)" "$3"
}

# How many WebKit processes of this desktop (same HOME) run, wherever they hang in the process tree.
webkit_count() {
  local pid count=0
  for pid in $(pgrep '^WebKit' 2>/dev/null); do
    if { tr '\0' '\n' <"/proc/$pid/environ"; } 2>/dev/null | grep -qx "HOME=$HOME"; then count=$((count + 1)); fi
  done
  echo "$count"
}
no_webkit() { [ "$(webkit_count)" -eq 0 ]; }
