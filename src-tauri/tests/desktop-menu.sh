# shellcheck shell=bash
# What desktop.sh reads of the app over the private session bus, sourced by it: the tray's menu
# (dbusmenu: an item's id by its label, a click, a submenu's items, a check item's tick) and the
# notifications dbus-monitor saw (how many, one call whole, their hints). They use desktop.sh's
# `prop`, `$item` and `$NOTIFY_LOG` when called.

menu_path() { prop Menu | sed -n "s/^(<objectpath '\(.*\)'>,)$/\1/p"; }
layout() { gdbus call --session -d "$item" -o "$(menu_path)" -m com.canonical.dbusmenu.GetLayout -- 0 -1 '[]' 2>/dev/null; }
# The dbusmenu id of the first item whose label starts with $1.
menu_id() {
  layout | python3 -c '
import re, sys
text, prefix = sys.stdin.read(), sys.argv[1]
for match in re.finditer(r"\((\d+), \{([^}]*)\}", text):
    found = re.search(r"'"'"'label'"'"': <'"'"'((?:[^'"'"'\\\\]|\\\\.)*)'"'"'>", match.group(2))
    if found and found.group(1).encode().decode("unicode_escape").encode("latin-1").decode("utf-8").startswith(prefix):
        print(match.group(1)); break
' "$1"
}
menu_has() { [ -n "$(menu_id "$1")" ]; }
click() {
  local id
  id="$(menu_id "$1")"
  [ -n "$id" ] || return 1
  gdbus call --session -d "$item" -o "$(menu_path)" -m com.canonical.dbusmenu.Event -- "$id" clicked '<int32 0>' 0 >/dev/null
}
notify_count() { grep -c 'member=Notify' "$NOTIFY_LOG"; }
# The whole Notify call whose summary is $1, as dbus-monitor printed it (its hints included).
notify_call() {
  awk -v title="string \"$1\"" '
    /member=Notify/ { if (found) exit; block = ""; inside = 1 }
    /^(method|signal|method return|error) / && !/member=Notify/ { if (found) exit; inside = 0 }
    inside { block = block $0 "\n"; if (index($0, title)) found = 1 }
    END { if (found) printf "%s", block }
  ' "$NOTIFY_LOG"
}
# No Notify call sets an urgency: the server reads that as normal (critical would break through
# the desktop's Do Not Disturb).
no_urgency() { ! grep -q 'string "urgency"' "$NOTIFY_LOG"; }
notified() { [ "$(notify_count)" -eq "$1" ]; }
# The items of the submenu whose label starts with $1, a line each: its dbusmenu id, a tab and its
# label (a separator is "---"). Fails when no submenu's label starts so.
submenu_items() {
  layout | python3 -c '
import re, sys
text, prefix = sys.stdin.read(), sys.argv[1]
def label(props):
    found = re.search(r"'"'"'label'"'"': <'"'"'((?:[^'"'"'\\]|\\.)*)'"'"'>", props)
    if found:
        return found.group(1).encode().decode("unicode_escape").encode("latin-1").decode("utf-8")
    return "---" if "separator" in props else ""
start = None
for match in re.finditer(r"\((\d+), \{([^}]*)\}, \[", text):
    if label(match.group(2)).startswith(prefix):
        start = match.end(); break
if start is None:
    sys.exit(1)
depth, end = 1, start
while depth and end < len(text):
    depth += {"[": 1, "]": -1}.get(text[end], 0); end += 1
for number, props in re.findall(r"<\((\d+), \{([^}]*)\}, @?a?v? ?\[", text[start:end]):
    print(f"{number}\t{label(props)}")
' "$1"
}
# The labels of the submenu whose label starts with $1, joined by " | " (a separator is "---").
submenu() {
  local items
  items="$(submenu_items "$1")" || return 1
  printf '%s\n' "$items" | awk -F'\t' 'NF { printf "%s%s", (n++ ? " | " : ""), $2 } END { print "" }'
}
# The dbusmenu id of the item labelled $2 in the submenu whose label starts with $1.
submenu_item() {
  submenu_items "$1" | awk -F'\t' -v wanted="$2" '$2 == wanted { print $1; exit }'
}
click_in() {
  local id
  id="$(submenu_item "$1" "$2")"
  [ -n "$id" ] || return 1
  gdbus call --session -d "$item" -o "$(menu_path)" -m com.canonical.dbusmenu.Event -- "$id" clicked '<int32 0>' 0 >/dev/null
}
# The tray's "Mute notifications for" submenu: the session, ticked while muted; a click toggles.
ticked() { # label: the menu's check item of that label is ticked (1: unticked, 2: no such item)
  layout | python3 -c '
import re, sys
text, wanted = sys.stdin.read(), sys.argv[1]
for props in re.findall(r"\(\d+, \{([^}]*)\}", text):
    found = re.search(r"'"'"'label'"'"': <'"'"'((?:[^'"'"'\\]|\\.)*)'"'"'>", props)
    if found and found.group(1).encode().decode("unicode_escape").encode("latin-1").decode("utf-8") == wanted:
        sys.exit(0 if "'"'"'toggle-state'"'"': <1>" in props else 1)
sys.exit(2)
' "$1"
}
unticked() { ticked "$1"; [ $? -eq 1 ]; }
