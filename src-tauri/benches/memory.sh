#!/usr/bin/env bash
# The tray app's memory, measured on the release build (what people run) under Xvfb with the same
# private D-Bus session, StatusNotifierWatcher, dunst and openbox as src-tauri/tests/desktop.sh,
# over a temporary HOME with two live fixture Claude Code sessions run by fake `claude` processes.
# It prints figures and asserts nothing.
#
# Every figure is the proportional set size (PSS, from /proc/<pid>/smaps_rollup) of the app and
# all its descendants added up (WebKit's web and network processes are children of the app):
#   1. never opened: the window never shown, 12 s and 60 s after start;
#   2. open: 5 s after a second launch showed the window;
#   3. closed again: after the window is closed, every second for 10 s, with the time it took to
#      come back within 5 MB of the never-opened figure and the WebKit processes still alive;
#   4. soak (last run only, about 10 minutes): sessions appear, change state and close (about
#      2,000 transitions, counted in the engine's own store), the window is opened and closed 100
#      times, notifications fire; the total is sampled about every 10 s with the window closed, and
#      the slope (MB per 1,000 transitions) is fitted by least squares.
# Steps 1-3 run SLATE_BENCH_RUNS times, each on a fresh start of the app, and print medians.
# PSS shares a library's pages among every process that maps them, so it drops while another
# program maps the same libraries (another GTK app; on a shared machine, another test's copy of
# Slate). The lines also give USS (pages only the app maps, which drops too when another program
# maps the same pages) and RSS, which does not move with other programs; the soak's slope is
# fitted on all three.
#
# Usage: src-tauri/benches/memory.sh            (from anywhere; builds the release slate-app first)
# Knobs: SLATE_BENCH_PROFILE (release; `desktop` measures the size-optimised build that profile
#   in Cargo.toml makes), SLATE_BENCH_RUNS (3), SLATE_BENCH_SOAK_SECS (600), SLATE_BENCH_CYCLES (100),
#   SLATE_BENCH_TRANSITIONS (2000), SLATE_BENCH_SKIP=soak, SLATE_BENCH_APP=<binary> (measure another
#   build), SLATE_BENCH_ENV="NAME=value …" (extra environment for the app, to try a setting),
#   SLATE_BENCH_ANATOMY=1 (print what the app process itself maps, by kind, at rest and closed).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=src-tauri/tests/private-desktop.sh
. "$ROOT/src-tauri/tests/private-desktop.sh"

if [ "${1:-}" != "--inside" ]; then
  cd "$ROOT"
  if [ -z "${SLATE_BENCH_APP:-}" ]; then
    # Built in Cargo's target folder (<repo>/target, or CARGO_TARGET_DIR).
    # shellcheck source=scripts/target-dir.sh
    . "$ROOT/scripts/target-dir.sh"
    cargo build --profile "${SLATE_BENCH_PROFILE:-release}" -p slate-app --locked --quiet ||
      { echo "the ${SLATE_BENCH_PROFILE:-release} build failed"; exit 1; }
    export SLATE_BENCH_APP="$CARGO_TARGET_DIR/${SLATE_BENCH_PROFILE:-release}/slate-app"
  fi
  private_desktop_run "$0" "$(mktemp -d /tmp/slate-memory.XXXXXX)"
  status=$?
  [ "$status" -eq 97 ] && { echo "Xvfb did not start"; exit 1; }
  if [ -z "${SLATE_KEEP_BENCH:-}" ]; then rm -rf "$WORK"; else echo "kept $WORK"; fi
  exit "$status"
fi

# ---- inside the private D-Bus session ----
cd "$ROOT"
APP="$SLATE_BENCH_APP"
RUNS="${SLATE_BENCH_RUNS:-3}"
SOAK_SECS="${SLATE_BENCH_SOAK_SECS:-600}"
CYCLES="${SLATE_BENCH_CYCLES:-100}"
TRANSITIONS="${SLATE_BENCH_TRANSITIONS:-2000}"
SKIP="${SLATE_BENCH_SKIP:-}"
LOG="$WORK/app.log"
NOTIFY_LOG="$WORK/notify.log"
STORE="$XDG_DATA_HOME/slate/slate.db"
pids=()
app_pid=""

cleanup() {
  [ -n "${driver_pid:-}" ] && kill "$driver_pid" 2>/dev/null
  [ -n "$app_pid" ] && kill "$app_pid" 2>/dev/null
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  [ -f "$WORK/agents.pids" ] && kill $(cat "$WORK/agents.pids") 2>/dev/null
}
trap cleanup EXIT

private_desktop_services "$NOTIFY_LOG"

# ---- sessions: fake `claude` processes in their folders, and the transcripts they would write ----
mkdir -p "$WORK/bin"
cp "$(command -v sleep)" "$WORK/bin/claude"
prompt() { line "$1" "$2" '"type":"user","message":{"role":"user","content":"go on"}' >>"$3"; }
finish() {
  {
    line "$1" "$2" '"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Done."}]}'
    line "$1" "$2" '"type":"system","subtype":"turn_duration","durationMs":900'
  } >>"$3"
}
agent_in() { # folder: a fake agent working there, its pid on stdout
  mkdir -p "$1"
  (cd "$1" && exec "$WORK/bin/claude" 100000) >/dev/null 2>&1 &
  echo $! >>"$WORK/agents.pids"
  echo $!
}
# Two live sessions for the whole bench: one working, one waiting for the person.
for name in acme-api web; do
  dir="$HOME/code/$name"
  agent_in "$dir" >/dev/null
done
sleep 1 # the processes must be older than the sessions' first lines
ACME_DIR="$HOME/code/acme-api" ACME=de5c0001-0000-4000-8000-000000000001
WEB_DIR="$HOME/code/web" WEB=de5c0002-0000-4000-8000-000000000002
line "$ACME_DIR" "$ACME" '"type":"user","message":{"role":"user","content":"add rate limiting"}' >>"$(transcript "$ACME_DIR" "$ACME")"
line "$ACME_DIR" "$ACME" '"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"cargo test"}}]}' >>"$(transcript "$ACME_DIR" "$ACME")"
prompt "$WEB_DIR" "$WEB" "$(transcript "$WEB_DIR" "$WEB")"
finish "$WEB_DIR" "$WEB" "$(transcript "$WEB_DIR" "$WEB")"

# ---- what is measured ----
# The app and every descendant, one pid a line.
tree() {
  ps -e -o pid=,ppid= | awk -v root="$1" '
    { kids[$2] = kids[$2] " " $1 }
    END {
      n = 1; queue[1] = root
      for (i = 1; i <= n; i++) {
        count = split(kids[queue[i]], list, " ")
        for (k = 1; k <= count; k++) queue[++n] = list[k]
      }
      for (i = 1; i <= n; i++) print queue[i]
    }'
}
pss_kb() { awk '/^Pss:/ { print $2; found = 1 } END { if (!found) print 0 }' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0; }
# Total PSS of the app and its descendants, in kB.
total_kb() {
  local sum=0 pid
  for pid in $(tree "$app_pid"); do sum=$((sum + $(pss_kb "$pid"))); done
  echo "$sum"
}
# Total USS (pages no other process maps) and RSS of the app and its descendants, in kB.
total_uss_rss_kb() {
  local pid
  for pid in $(tree "$app_pid"); do cat "/proc/$pid/smaps_rollup" 2>/dev/null; done |
    awk '/^Private_(Clean|Dirty):/ { uss += $2 } /^Rss:/ { rss += $2 } END { print uss + 0, rss + 0 }'
}
# "USS x MB, RSS y MB" of the app and its descendants. PSS divides each shared page among the
# processes that map it, so it drops when another program maps the same libraries (another GTK
# app, another copy of Slate); USS (the pages only this tree maps) and RSS do not.
other_sizes() {
  local pid
  for pid in $(tree "$app_pid"); do cat "/proc/$pid/smaps_rollup" 2>/dev/null; done |
    awk '/^Rss:/ { rss += $2 } /^Private_(Clean|Dirty):/ { uss += $2 } END { printf "USS %.1f MB, RSS %.1f MB", uss / 1024, rss / 1024 }'
}
# "name PSS-kB" for each process of the tree, the same names added up.
breakdown() {
  local pid
  for pid in $(tree "$app_pid"); do
    printf '%s %s\n' "$(cat "/proc/$pid/comm" 2>/dev/null || echo gone)" "$(pss_kb "$pid")"
  done | awk '{ kb[$1] += $2; n[$1]++ } END { for (name in kb) printf "%s%s %.1f MB\n", name, (n[name] > 1 ? " ×" n[name] : ""), kb[name] / 1024 }' |
    sort | paste -sd, | sed 's/,/, /g'
}
# WebKit processes anywhere that belong to this bench (the tree, or reparented: same HOME).
webkit_alive() { webkit_count; }
mb() { awk -v kb="$1" 'BEGIN { printf "%.1f", kb / 1024 }'; }
# What the app process itself maps, by kind: its heap and anonymous memory, thread stacks, the
# binary, each library (largest first), and its thread count.
anatomy() {
  python3 - "$app_pid" <<'PY'
import collections, re, sys
pid = sys.argv[1]
kinds = collections.Counter()
current = None
for text in open(f"/proc/{pid}/smaps"):
    head = re.match(r"^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$", text)
    if head:
        name = head.group(1).strip()
        if not name:
            current = "anonymous (allocator arenas, thread stacks, JIT)"
        elif name.startswith("["):
            current = name
        elif "slate-app" in name:
            current = "the slate-app binary"
        elif name.startswith("/memfd:") or name.startswith("/dev/"):
            current = "shared memory " + name.split(" ")[0]
        else:
            current = name.rsplit("/", 1)[-1]
        continue
    if text.startswith("Pss:"):
        kinds[current] += int(text.split()[1])
import os
names = collections.Counter(open(f"/proc/{pid}/task/{task}/comm").read().strip() for task in os.listdir(f"/proc/{pid}/task"))
threads = ", ".join(f"{name} ×{count}" if count > 1 else name for name, count in sorted(names.items()))
total = sum(kinds.values())
print(f"    slate-app itself: {total / 1024:.1f} MB PSS; {sum(names.values())} threads: {threads}")
for name, kb in kinds.most_common(16):
    print(f"      {kb / 1024:6.1f} MB  {name}")
rest = total - sum(kb for _, kb in kinds.most_common(16))
print(f"      {rest / 1024:6.1f} MB  everything else ({len(kinds) - 16} mappings' names)")
PY
}
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

window_visible() { xdotool search --onlyvisible --name '^Slate$' >/dev/null 2>&1; }
window_gone() { ! window_visible; }
open_window() { timeout 30 "$APP" >>"$WORK/second.log" 2>&1; eventually 20 window_visible; }
close_window() { wmctrl -c Slate; eventually 10 window_gone; }
start_app() {
  # shellcheck disable=SC2086
  env ${SLATE_BENCH_ENV:-} SLATE_LISTEN=127.0.0.1:0 "$APP" "$@" >>"$LOG" 2>&1 &
  app_pid=$!
  started=$SECONDS
}
stop_app() {
  kill "$app_pid" 2>/dev/null
  eventually 10 bash -c "! kill -0 $app_pid 2>/dev/null"
  eventually 10 no_webkit
  app_pid=""
}
wait_until() { # seconds since start
  local left=$(($1 - (SECONDS - started)))
  [ "$left" -gt 0 ] && sleep "$left"
}

echo "slate-app memory bench: $APP (the ${SLATE_BENCH_PROFILE:-release} build unless SLATE_BENCH_APP says otherwise)"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at start${SLATE_BENCH_ENV:+; app environment: $SLATE_BENCH_ENV}"
rest12=() rest60=() opened=() closed10=() settle=() after10_webkit=()

for run in $(seq 1 "$RUNS"); do
  start_app
  wait_until 12
  kb="$(total_kb)"; rest12+=("$(mb "$kb")")
  echo "run $run: never opened, 12 s: $(mb "$kb") MB ($(breakdown))"
  wait_until 60
  kb="$(total_kb)"; rest=$kb; rest60+=("$(mb "$kb")")
  echo "run $run: never opened, 60 s: $(mb "$kb") MB; $(other_sizes) ($(breakdown))"
  [ -n "${SLATE_BENCH_ANATOMY:-}" ] && anatomy

  if open_window; then
    sleep 5
    kb="$(total_kb)"; opened+=("$(mb "$kb")")
    echo "run $run: window open, 5 s after showing: $(mb "$kb") MB; $(other_sizes) ($(breakdown))"
  else
    echo "run $run: the window did not show"
  fi

  close_window || echo "run $run: the window did not close"
  closed_at=$SECONDS
  back=""
  for second in $(seq 1 10); do
    sleep 1
    kb="$(total_kb)"
    if [ -z "$back" ] && [ $((kb - rest)) -le 5120 ]; then back=$second; fi
  done
  closed10+=("$(mb "$kb")")
  after10_webkit+=("$(webkit_alive)")
  [ -n "$back" ] && settle+=("$back")
  echo "run $run: closed again, 10 s later: $(mb "$kb") MB, $(mb $((kb - rest))) MB above never-opened; $(other_sizes);" \
    "within 5 MB after ${back:-more than 10} s; WebKit processes alive: $(webkit_alive) ($(breakdown))"
  [ -n "${SLATE_BENCH_ANATOMY:-}" ] && anatomy
  [ "$run" -lt "$RUNS" ] && stop_app
done

# ---- soak: a day of use, scaled down ----
case ",$SKIP," in *,soak,*) SOAK_SECS=0 ;; esac
if [ "$SOAK_SECS" -gt 0 ]; then
  # The transitions the engine recorded in its store, read-only (python3 is in scripts/deps.sh).
  transitions() {
    python3 -c 'import sqlite3, sys
print(sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True).execute("SELECT count(*) FROM transitions").fetchone()[0])' \
      "$STORE" 2>/dev/null || echo 0
  }
  notifications() { grep -c 'member=Notify' "$NOTIFY_LOG"; }
  # Sessions come and go on eight slots: a fake agent starts in a new folder, its session starts
  # working a second later, finishes and is prompted again a few times (each finish is a Needs you
  # flip that notifies), then its agent exits and the engine closes the session at its next process
  # scan. One action a tick; the tick is set so the soak makes about $TRANSITIONS transitions.
  (
    slots=8 flips=8 serial=0
    tick="$(awk -v s="$SOAK_SECS" -v t="$TRANSITIONS" 'BEGIN { printf "%.3f", s / t }')"
    declare -a state pid dir id file left
    for slot in $(seq 0 $((slots - 1))); do state[slot]=empty; done
    slot=0
    while :; do
      case "${state[slot]}" in
        empty)
          serial=$((serial + 1))
          dir[slot]="$HOME/soak/s$serial"
          id[slot]="$(printf 'aaaa%04x-0000-4000-8000-%012x' "$slot" "$serial")"
          pid[slot]="$(agent_in "${dir[slot]}")"
          file[slot]="$(transcript "${dir[slot]}" "${id[slot]}")"
          left[slot]=$flips
          state[slot]=started ;;
        started|waiting)
          prompt "${dir[slot]}" "${id[slot]}" "${file[slot]}"
          state[slot]=working ;;
        working)
          finish "${dir[slot]}" "${id[slot]}" "${file[slot]}"
          left[slot]=$((left[slot] - 1))
          if [ "${left[slot]}" -le 0 ]; then state[slot]=ending; else state[slot]=waiting; fi ;;
        ending)
          kill "${pid[slot]}" 2>/dev/null
          wait "${pid[slot]}" 2>/dev/null
          state[slot]=empty ;;
      esac
      slot=$(((slot + 1) % slots))
      sleep "$tick"
    done
  ) &
  driver_pid=$!

  samples="$WORK/soak.tsv"
  : >"$samples"
  soak_start=$SECONDS
  last_sample=-10
  cycles=0 open_max=0 webkit_closed_max=0
  # With no window cycles the loop only samples, every 10 s.
  gap=$(awk -v s="$SOAK_SECS" -v c="$CYCLES" 'BEGIN { printf "%.2f", (c > 0 ? s / c : 10) }')
  echo "soak: ${SOAK_SECS} s, ${CYCLES} window cycles (one every ${gap} s), about ${TRANSITIONS} transitions"
  while [ $((SECONDS - soak_start)) -lt "$SOAK_SECS" ]; do
    cycle_start=$(date +%s.%N)
    if [ "$cycles" -lt "$CYCLES" ]; then
      if open_window; then
        sleep 1
        kb="$(total_kb)"; [ "$kb" -gt "$open_max" ] && open_max=$kb
      fi
      close_window
      eventually 10 no_webkit
      cycles=$((cycles + 1))
    fi
    if [ $((SECONDS - last_sample)) -ge 10 ]; then
      sleep 1
      last_sample=$SECONDS
      kb="$(total_kb)" alive="$(webkit_alive)" done_transitions="$(transitions)"
      read -r uss rss <<<"$(total_uss_rss_kb)"
      [ "$alive" -gt "$webkit_closed_max" ] && webkit_closed_max=$alive
      printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$((SECONDS - soak_start))" "$done_transitions" "$kb" "$alive" "$uss" "$rss" >>"$samples"
      echo "  t=$((SECONDS - soak_start)) s: $done_transitions transitions, $cycles window cycles, PSS $(mb "$kb") MB, USS $(mb "$uss") MB, RSS $(mb "$rss") MB, WebKit processes $alive"
    fi
    # Keep the cycles spread over the soak.
    sleep "$(awk -v g="$gap" -v s="$cycle_start" -v n="$(date +%s.%N)" 'BEGIN { d = g - (n - s); print (d > 0 ? d : 0) }')"
  done
  kill "$driver_pid" 2>/dev/null
  wait "$driver_pid" 2>/dev/null
  driver_pid=""
  soak_summary="$(python3 - "$samples" <<'PY'
import sys
rows = [tuple(map(float, l.split("\t"))) for l in open(sys.argv[1]) if l.strip()]
n = len(rows)

def fit(xs, ys):
    """Least-squares slope of ys over xs."""
    mx, my = sum(xs) / n, sum(ys) / n
    var = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / var if var else float("nan")

transitions = [r[1] for r in rows]
pss = [r[2] / 1024 for r in rows]
uss = [r[4] / 1024 for r in rows]
rss = [r[5] / 1024 for r in rows]
seconds = [r[0] for r in rows]
print("\t".join([
    f"{fit(transitions, pss) * 1000:.2f}", f"{fit(transitions, uss) * 1000:.2f}",
    f"{fit(transitions, rss) * 1000:.2f}", f"{fit(seconds, rss) * 3600:.1f}",
    f"{pss[0]:.1f}", f"{pss[-1]:.1f}", f"{max(pss):.1f}",
    f"{rss[0]:.1f}", f"{rss[-1]:.1f}", f"{int(transitions[-1])}", f"{n}",
]))
PY
)"
  IFS=$'\t' read -r slope uss_slope rss_slope rss_per_hour first last highest rss_first rss_last total_transitions nsamples <<<"$soak_summary"
  echo "soak: $total_transitions transitions, $cycles window cycles, $(notifications) notifications," \
    "$nsamples samples with the window closed: PSS first $first MB, last $last MB, highest $highest MB;" \
    "RSS first $rss_first MB, last $rss_last MB; window open at most $(mb "$open_max") MB PSS;" \
    "WebKit processes alive while closed: at most $webkit_closed_max"
  echo "soak: slope per 1,000 transitions: PSS $slope MB, USS $uss_slope MB, RSS $rss_slope MB ($rss_per_hour MB RSS per hour of soak)"
fi

echo
echo "figures (median of $RUNS runs; goal in brackets)"
echo "  never opened, 12 s after start:     $(printf '%s ' "${rest12[@]}" | median) MB   (runs: ${rest12[*]})"
echo "  never opened, 60 s after start:     $(printf '%s ' "${rest60[@]}" | median) MB   (runs: ${rest60[*]}) [≤ 60 MB]"
[ "${#opened[@]}" -gt 0 ] &&
  echo "  window open:                        $(printf '%s ' "${opened[@]}" | median) MB   (runs: ${opened[*]})"
echo "  closed again, 10 s after closing:   $(printf '%s ' "${closed10[@]}" | median) MB   (runs: ${closed10[*]}) [within 5 MB of never opened, in 10 s]"
echo "    within 5 MB after (s):            ${settle[*]:-never within 10 s}; WebKit processes alive 10 s after closing: ${after10_webkit[*]} [0]"
[ "$SOAK_SECS" -gt 0 ] &&
  echo "  soak slope:                         $slope MB PSS ($uss_slope USS, $rss_slope RSS) per 1,000 transitions [≤ 1]; WebKit alive while closed: at most $webkit_closed_max [0]"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
