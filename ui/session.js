//! Reading a session object as the server sends it, with no page state and no DOM: its status,
//! reason and time, the order of the list, relative times, whether its machine is unreachable,
//! and the dialog its terminal shows with the options the server offers to answer from here.
//! Every field is optional on the page's side: a missing one is left out rather than shown as
//! "undefined".

export const STATUS = {
  waiting: { label: "Needs you", rank: 0 },
  working: { label: "Working", rank: 1 },
  ended: { label: "Closed", rank: 2 },
};

/** How the page names each kind of dialog. */
export const DIALOG_KIND = { permission: "Permission", question: "Question", plan: "Plan" };
/** The actions Slate offers on a dialog's option; an option with any other action gets no button. */
export const ANSWERS = new Set(["approve", "deny", "answer"]);

export function statusOf(session) {
  const facets = session.session_state;
  return (facets && facets.status) || session.status || "working";
}

export function reasonOf(session) {
  const reason = session.session_state && session.session_state.reason;
  return reason ? reason.text || reason.code || "" : "";
}

export function timeOf(session) {
  const at = session.row_time || (session.session_state && session.session_state.active_at);
  const ms = at ? Date.parse(at) : NaN;
  return Number.isNaN(ms) ? null : ms;
}

export function statusLabel(status) {
  return (STATUS[status] && STATUS[status].label) || status;
}

/** Needs you first, then Working; the most recent first within a group. */
export function ordered(sessions) {
  const rank = (s) => (STATUS[statusOf(s)] ? STATUS[statusOf(s)].rank : 3);
  return [...sessions].sort((a, b) => rank(a) - rank(b) || (timeOf(b) ?? 0) - (timeOf(a) ?? 0));
}

/** "12 s", "5 min", "3 h", "2 d": how long ago `ms` was. */
export function ago(ms, now = Date.now()) {
  return span(now - ms);
}

/** "12 s", "5 min", "3 h", "2 d": a length of time in milliseconds, rounded down. */
export function span(ms) {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h`;
  return `${Math.floor(hours / 24)} d`;
}

/** Whether the server says it cannot reach the session's machine now. */
export function unreachable(session) {
  return Boolean(session.machine && session.unreachable_since);
}

/** The dialog the session's terminal shows now, or null. */
export function dialogOf(session) {
  const dialog = session.dialog;
  return dialog && typeof dialog === "object" && typeof dialog.fingerprint === "string" ? dialog : null;
}

/** The dialog's options that the server offers to answer from here, in the order drawn. */
export function offeredOptions(dialog) {
  return (Array.isArray(dialog.options) ? dialog.options : []).filter((option) => option && ANSWERS.has(option.action) && option.label);
}
