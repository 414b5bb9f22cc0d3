//! The window's page: the live list (Needs you first), the details pane, the empty state and the
//! keyboard. It keeps the sessions the server last sent and redraws from them; it never decides a
//! session's state itself (docs/states.md §4: every surface reads the one `session_state`), nor
//! which sessions are on the live list (the server's policy keeps a closed session there while it
//! holds a work claim, and shows it under Closed here), and it never talks to the backend except
//! through `api.js`. It counts sessions only by the status each one carries. The agents' names
//! and folders come from the server too (`Api.agents`), so an agent the page has never heard of
//! shows by its own name, and a config error the server reports in `/health` is shown above the
//! list. A session without `session_state` (an older server) is shown from its top-level
//! `status`, with no facets. A session on a remote machine is marked with the machine's name;
//! while the server cannot reach that machine (`unreachable_since`), it is greyed out, keeps the
//! state its machine last reported, and is not counted as needing you, and the machines the
//! server cannot reach are named above the list (`/health`'s `remotes`). Inside the desktop app,
//! when the app uses the Slate service instead of an engine of its own (the endpoint the shell
//! hands the page says so), a line says "Using the Slate service". A page opened without the
//! token, or whose token the server refuses, says how to open it instead of showing a list.
//!
//! A session whose terminal shows a dialog (`session.dialog`) shows the dialog's summary and one
//! button per option the server offers (an `action` that is not null), in its row and in the
//! details pane. A button answers through `POST /sessions/{id}/respond` with the fingerprint of the
//! dialog it was drawn for, so an answer never lands on a dialog the person did not see; the server
//! re-reads the screen and refuses when it changed. Options that widen permissions get no button,
//! and a dialog Slate cannot type into shows why instead. Where the summary does not hold the
//! whole command (more lines, a long one, or one the screen cut short), every line of it is shown
//! above the buttons (`dialog.detail`), with a note when it is cut.
//!
//! This module keeps the page's state, draws from it and handles the keyboard and the stream;
//! reading a session object is `session.js`'s, and the elements that need no page state are
//! `parts.js`'s.

import { Api, reference, resolveEndpoint, sessionKey } from "./api.js";
import { el, agoNode, detailNode, answeredText, facetRow, code, facetsNode, transitionsNode, usageNode, renderDayUsage } from "./parts.js";
import { DIALOG_KIND, statusOf, reasonOf, timeOf, statusLabel, ordered, ago, span, unreachable, dialogOf, offeredOptions } from "./session.js";

/** How often the relative times ("12 s", "5 min") are brought up to date: one timer for the page. */
const CLOCK_TICK_MS = 15_000;

const state = {
  api: null,
  /** The reason being typed in the details pane, kept across re-renders: `{key, text}`. */
  intentDraft: { key: null, text: "" },
  sessions: new Map(),
  /** True once a list or snapshot has arrived, so the empty state is not shown while connecting. */
  loaded: false,
  snapshotSeen: false,
  selected: null,
  detailsOpen: false,
  /** The details response for the selected session: {key, data, error}. */
  details: null,
  /** The agents the server looks for (`Api.agents`): their names and folders; null until known. */
  agents: null,
  /** The last `/health` answer, for the config error it reports; null until known. */
  health: null,
  connection: "connecting",
  retryInMs: 0,
  /** Why the server could not prove it holds the token (it was sent nothing), or null. */
  unproven: null,
  /** Why the page cannot read (no token, or one refused), or null while it can. */
  locked: null,
  /**
   * The last answer given per session key: `{fingerprint, busy, text, error}`, shown beside the
   * dialog it was given to while that dialog (same fingerprint) is still drawn.
   */
  answers: new Map(),
};

/** The name the server gives an agent, else its id (an agent this server does not describe). */
function agentName(agent) {
  const known = state.agents && state.agents.find((root) => root.agent === agent);
  return (known && (known.product || known.name)) || agent || "unknown agent";
}

/**
 * How many listed sessions carry `status`. A session whose machine cannot be reached is not
 * counted: the server does not count it as needing you either.
 */
function countOf(status) {
  let n = 0;
  for (const session of state.sessions.values()) if (statusOf(session) === status && !unreachable(session)) n += 1;
  return n;
}

// ---------------------------------------------------------------------------------------------
// A session's row and its dialog. Text from the server only ever goes into text nodes (`el`).

const rowIds = new Map();
function rowId(key) {
  if (!rowIds.has(key)) rowIds.set(key, `row-${rowIds.size + 1}`);
  return rowIds.get(key);
}

function branchNode(session) {
  if (!session.branch) return null;
  const parts = [session.branch];
  const said = [];
  if (Number(session.ahead) > 0) {
    parts.push(`↑${session.ahead}`);
    said.push(`${session.ahead} ahead`);
  }
  if (Number(session.behind) > 0) {
    parts.push(`↓${session.behind}`);
    said.push(`${session.behind} behind`);
  }
  if (session.dirty === true) {
    parts.push("*");
    said.push("uncommitted changes");
  } else if (Number(session.dirty) > 0) {
    parts.push(`*${session.dirty}`);
    said.push(`${session.dirty} uncommitted ${Number(session.dirty) === 1 ? "change" : "changes"}`);
  }
  const label = said.length ? `branch ${session.branch}, ${said.join(", ")}` : `branch ${session.branch}`;
  return el("span", { class: "branch", title: label, "aria-label": label, text: parts.join(" ") });
}

/** The machine a remote session runs on, as a mark on its row; nothing for this machine's. */
function machineNode(session) {
  if (!session.machine) return null;
  const away = unreachable(session);
  const since = away ? Date.parse(session.unreachable_since) : NaN;
  const label = away
    ? `On ${session.machine}, unreachable${Number.isNaN(since) ? "" : ` since ${new Date(since).toLocaleTimeString()}`}: this is the state it last reported`
    : `On ${session.machine}`;
  return el("span", { class: away ? "machine unreachable" : "machine", title: label, "aria-label": label, text: session.machine });
}

function rowNode(session) {
  const key = sessionKey(session);
  const status = statusOf(session);
  const reason = reasonOf(session);
  const heading = session.title || session.last_prompt || "(no prompt yet)";
  const selected = key === state.selected;
  return el(
    "div",
    {
      class: `row status-${status}${unreachable(session) ? " unreachable" : ""}`,
      role: "option",
      id: rowId(key),
      "data-key": key,
      "aria-selected": selected ? "true" : "false",
      onclick: () => {
        select(key);
        openDetails();
      },
    },
    el(
      "div",
      { class: "row-top" },
      el("span", { class: `pill status-${status}`, text: statusLabel(status) }),
      el("span", { class: "reason", title: reason, text: reason }),
      agoNode(timeOf(session)),
    ),
    el("div", { class: "row-title", title: heading, text: heading }),
    el(
      "div",
      { class: "row-meta" },
      machineNode(session),
      el("span", { class: "project", title: session.folder || "", text: session.project || session.folder || "no folder" }),
      branchNode(session),
      el("span", { class: "agent", text: agentName(session.agent) }),
      session.hosted === true ? el("span", { class: "hosted", title: "Started with slate run", text: "hosted" }) : null,
      session.muted === true ? el("span", { class: "muted", title: "No notifications for this session", text: "muted" }) : null,
      usageNode(session),
    ),
  );
}

/**
 * The dialog on the session's screen: its summary and a button per offered option (`where` is
 * "row" or "details", to keep the buttons' ids apart), why it cannot be answered from here, and
 * the outcome of the last answer given to it.
 */
function dialogNode(session, where) {
  const dialog = dialogOf(session);
  if (!dialog) return null;
  const key = sessionKey(session);
  const last = state.answers.get(key);
  const given = last && last.fingerprint === dialog.fingerprint ? last : null;
  const prefix = where === "row" ? rowId(key) : "details";
  const options = offeredOptions(dialog);
  let body;
  // A dialog on another machine is answered through the server too, which forwards the answer
  // over that machine's SSH link; the server marks it not answerable while the link is down.
  if (dialog.answerable === false) {
    body = el("p", { class: "note why-not", text: `Cannot answer from here: ${dialog.why_not || "Slate cannot type into this terminal"}` });
  } else if (!options.length) {
    body = el("p", { class: "note why-not", text: "Every option here widens permissions: answer it in the terminal" });
  } else {
    body = el(
      "div",
      { class: "answer-buttons", role: "group", "aria-label": `Answer: ${dialog.summary || "the dialog"}` },
      options.map((option, index) =>
        el(
          "button",
          {
            type: "button",
            id: `${prefix}-answer-${index}`,
            class: `answer ${option.action}`,
            "data-action": option.action,
            "data-option": option.number === null || option.number === undefined ? null : String(option.number),
            title: option.action === "approve" ? "Allow this once" : option.action === "deny" ? "Refuse it" : `Choose “${option.label}”`,
            disabled: Boolean(given && given.busy),
            onclick: (event) => {
              event.stopPropagation();
              answerDialog(session, dialog, option, event.currentTarget.id);
            },
          },
          option.label,
        ),
      ),
    );
  }
  return el(
    "div",
    { class: `dialog dialog-${where}`, "data-fingerprint": dialog.fingerprint, "data-key": key },
    el(
      "p",
      { class: "dialog-summary" },
      el("span", { class: "dialog-kind", text: DIALOG_KIND[dialog.kind] || "Dialog" }),
      el("span", { class: "dialog-text", title: dialog.summary || "", text: dialog.summary || "" }),
    ),
    detailNode(dialog),
    body,
    given && given.text ? el("p", { class: `answer-outcome${given.error ? " error" : ""}`, text: given.text }) : null,
  );
}

/**
 * Answers the dialog the page drew with the option clicked, sending the fingerprint of that very
 * drawing. The session's buttons are disabled while the answer is in flight, and the outcome (or
 * the server's reason for refusing) is shown by the dialog and in the message line.
 */
async function answerDialog(session, dialog, option, buttonId) {
  const key = sessionKey(session);
  const last = state.answers.get(key);
  if (!state.api || (last && last.busy)) return;
  const fingerprint = dialog.fingerprint;
  state.answers.set(key, { fingerprint, busy: true, text: "Answering…", error: false });
  render();
  const request = { action: option.action, dialog: fingerprint };
  if (option.action === "answer") request.option = option.number === null || option.number === undefined ? option.label : option.number;
  let outcome;
  try {
    const result = await state.api.respond(reference(session), request);
    outcome = { fingerprint, busy: false, text: answeredText(option, result), error: false };
  } catch (error) {
    outcome = { fingerprint, busy: false, text: `Not answered: ${error && error.message ? error.message : error}`, error: true };
  }
  state.answers.set(key, outcome);
  say(outcome.text, outcome.error);
  render();
  // The button keeps the keyboard's place when the dialog is still drawn (a refusal).
  const button = buttonId && $(buttonId);
  if (button && (document.activeElement === document.body || !document.activeElement)) button.focus();
}

// ---------------------------------------------------------------------------------------------
// Drawing.

const $ = (id) => document.getElementById(id);

function renderHeader() {
  const waiting = countOf("waiting");
  $("count").textContent = String(waiting);
  $("count-word").textContent = waiting === 1 ? "needs you" : "need you";
  $("summary").dataset.waiting = String(waiting);
  const working = countOf("working");
  $("working-count").textContent = state.sessions.size ? `${working} working` : "";
  renderDayUsage($("day-usage"), state.sessions.values());
  document.title = waiting > 0 ? `(${waiting}) Slate` : "Slate";

  const error = state.health && state.health.settings ? state.health.settings.error : null;
  const banner = $("config-error");
  banner.hidden = !error;
  banner.textContent = error ? `The config file is not in force: ${error}` : "";

  const away = Api.remotesOf(state.health).filter((remote) => remote.status === "unreachable");
  const remotes = $("remotes");
  remotes.hidden = away.length === 0;
  remotes.replaceChildren(
    ...away.map((remote) =>
      el(
        "span",
        { class: "remote-down", title: remote.error || "" },
        el("strong", { text: remote.name }),
        " is unreachable",
        remote.since ? [" (since ", agoNode(Date.parse(remote.since) || null, " ago"), ")"] : "",
        remote.error ? `: ${remote.error}` : "",
      ),
    ),
  );

  $("served-by").hidden = !(state.api && state.api.usesService);

  const conn = $("connection");
  conn.dataset.state = state.connection;
  const labels = { open: "Live", retrying: "Offline", unproven: "Not proven", locked: "No access" };
  const again = `trying again in ${Math.ceil(state.retryInMs / 1000)} s`;
  conn.textContent = labels[state.connection] || "Connecting…";
  conn.title = state.connection === "retrying" || state.connection === "unproven" ? `The list may be out of date; ${again}` : "";

  const doubt = $("unproven");
  doubt.hidden = !state.unproven;
  doubt.textContent = state.unproven ? `${state.unproven[0].toUpperCase()}${state.unproven.slice(1)}; ${state.connection === "unproven" ? again : "asking it again"}.` : "";
}

function renderList() {
  const list = $("list");
  $("no-token").hidden = !state.locked;
  if (state.locked) {
    $("no-token-why").textContent = state.locked;
    $("no-token-address").textContent = `${state.api ? state.api.base : location.origin}/#token=`;
    for (const id of ["list", "empty", "loading"]) $(id).hidden = true;
    return;
  }
  const sessions = ordered(state.sessions.values());
  list.replaceChildren();
  let group = null;
  let groupStatus = null;
  for (const session of sessions) {
    const status = statusOf(session);
    if (status !== groupStatus) {
      groupStatus = status;
      const headingId = `group-${status}`;
      // A session whose machine cannot be reached is listed but, as in the header, not counted.
      const count = sessions.filter((s) => statusOf(s) === status && !unreachable(s)).length;
      group = el(
        "div",
        { class: `group group-${status}`, role: "group", "aria-labelledby": headingId },
        el("div", { class: "group-heading", id: headingId, role: "presentation" }, statusLabel(status), el("span", { class: "group-count", text: ` ${count}` })),
      );
      list.append(group);
    }
    group.append(rowNode(session));
    // The dialog's buttons sit under the row, not inside it: a listbox option is read as one
    // piece of text, and a button in it could be neither reached nor announced as a button.
    const dialog = dialogNode(session, "row");
    if (dialog) group.append(dialog);
  }
  const selected = state.selected && state.sessions.has(state.selected) ? rowId(state.selected) : null;
  if (selected) list.setAttribute("aria-activedescendant", selected);
  else list.removeAttribute("aria-activedescendant");

  const empty = state.loaded && state.sessions.size === 0;
  $("empty").hidden = !empty;
  list.hidden = state.sessions.size === 0;
  $("loading").hidden = state.loaded;
  if (empty) renderEmpty();
}

function renderEmpty() {
  const rows = (state.agents || []).map((root) =>
    el(
      "li",
      {},
      el("span", { class: "agent-name", text: agentName(root.agent) }),
      el("code", { text: root.path || "" }),
      typeof root.found === "boolean" ? el("span", { class: root.found ? "found" : "missing", text: root.found ? "found" : "not found" }) : null,
    ),
  );
  $("agent-roots").replaceChildren(...rows);
}

function renderDetails() {
  const pane = $("details");
  const app = $("app");
  const session = state.selected ? state.sessions.get(state.selected) : null;
  const open = state.detailsOpen && session;
  app.classList.toggle("details-open", Boolean(open));
  pane.hidden = !open;
  if (!open) return;

  const status = statusOf(session);
  const details = state.details && state.details.key === state.selected ? state.details : null;
  const evidence = details && details.data ? details.data.evidence : null;
  const transitions = details && details.data ? details.data.transitions : null;
  const needsYouMs = details && details.data ? details.data.needsYouMs : null;
  const heading = session.title || session.last_prompt || "(no prompt yet)";

  const body = el(
    "div",
    { class: "details-body" },
    el(
      "header",
      { class: "details-head" },
      el("button", { type: "button", class: "back", id: "close-details", title: "Close (Esc)", "aria-label": "Close details", onclick: closeDetails }, "←"),
      el("div", { class: "details-title" }, el("span", { class: `pill status-${status}`, text: statusLabel(status) }), el("h2", { id: "details-heading", text: heading })),
    ),
    el("p", { class: "details-reason", text: reasonOf(session) }),
    dialogNode(session, "details"),
    unreachable(session)
      ? el("p", { class: "note unreachable-note", text: `Slate cannot reach ${session.machine} now: this is the state it last reported, and it is not counted.` })
      : null,
    el(
      "div",
      { class: "actions" },
      state.api && state.api.canFocus
        ? el(
            "button",
            { type: "button", id: "focus", class: "primary", onclick: () => focusSelected() },
            session.machine ? `Attach on ${session.machine}` : "Focus terminal",
          )
        : null,
      el("button", { type: "button", id: "refresh-details", onclick: () => refresh() }, "Refresh"),
      // Mutes live in the store of the machine the session runs on, as intents do.
      session.machine
        ? null
        : el(
            "button",
            { type: "button", id: "mute", onclick: () => setMuted(session.muted !== true) },
            session.muted === true ? "Unmute" : "Mute",
          ),
    ),
    // Intents live in the store of the machine the session runs on.
    session.machine
      ? el("p", { class: "note", text: `Park or await it on ${session.machine}: slate park ${session.id} --reason …` })
      : intentNode(session),
    facetsNode(session),
    el(
      "section",
      { class: "about", "aria-label": "Session" },
      el("h3", { text: "Session" }),
      el(
        "dl",
        {},
        facetRow("Machine", session.machine || ""),
        facetRow("Agent", agentName(session.agent), session.cli_version ? ` ${session.cli_version}` : "", session.model ? ` · ${session.model}` : ""),
        facetRow("Project", session.project),
        facetRow("Folder", code(session.folder)),
        facetRow("Branch", branchNode(session)),
        facetRow("Transcript", code(session.transcript)),
        facetRow("PID", session.pid === null || session.pid === undefined ? "" : String(session.pid)),
        facetRow("Hosted", session.hosted === true ? "yes, started with slate run" : ""),
        facetRow("Last prompt", session.last_prompt && session.last_prompt !== session.title ? session.last_prompt : ""),
        facetRow("Session id", code(session.id)),
      ),
    ),
    el(
      "section",
      { class: "evidence", "aria-label": "Evidence" },
      el("h3", { text: "Evidence" }),
      details && details.error
        ? el("p", { class: "note error", text: `Could not load the evidence: ${details.error}` })
        : evidence === null
          ? el("p", { class: "note", text: "Loading…" })
          : evidence.length
            ? el("ul", { id: "evidence-list" }, evidence.map((line) => el("li", { text: line })))
            : el("p", { class: "note", text: "No evidence given." }),
    ),
    el(
      "section",
      { class: "history", "aria-label": "Recent transitions" },
      el("h3", { text: "Recent transitions" }),
      typeof needsYouMs === "number" ? el("p", { class: "needs-you-total", text: `Needed you for ${span(needsYouMs)} in all` }) : null,
      transitions === null ? (details && details.error ? null : el("p", { class: "note", text: "Loading…" })) : transitionsNode(transitions),
    ),
  );
  // The pane is drawn again on every change; someone typing a reason keeps their place.
  const typing = document.activeElement && document.activeElement.id === "intent-reason";
  pane.replaceChildren(body);
  if (typing) {
    const input = $("intent-reason");
    input.focus();
    input.setSelectionRange(input.value.length, input.value.length);
  }
}

function render() {
  // The list and the pane are drawn anew on every change: a focused answer button keeps the focus.
  const focused = document.activeElement && /-answer-\d+$/.test(document.activeElement.id) ? document.activeElement.id : null;
  renderHeader();
  renderList();
  renderDetails();
  const again = focused && $(focused);
  if (again && again !== document.activeElement && !again.disabled) again.focus();
}

/** Brings every relative time on the page up to date; run by the one page clock. */
function tick() {
  // The config may have been edited since: its error comes and goes with the file.
  readHealth();
  const now = Date.now();
  for (const node of document.querySelectorAll("time[data-at]")) {
    node.textContent = ago(Number(node.dataset.at), now) + (node.dataset.suffix || "");
  }
}

function say(message, isError = false) {
  const line = $("message");
  line.textContent = message;
  line.classList.toggle("error", isError);
  clearTimeout(say.timer);
  if (message) say.timer = setTimeout(() => say(""), 4000);
}

// ---------------------------------------------------------------------------------------------
// Selection, details and actions.

function select(key) {
  if (state.selected === key) return;
  state.selected = key;
  if (state.detailsOpen) loadDetails();
  render();
  const row = key && document.getElementById(rowId(key));
  if (row) row.scrollIntoView({ block: "nearest" });
}

function move(step) {
  const keys = ordered(state.sessions.values()).map(sessionKey);
  if (!keys.length) return;
  const at = keys.indexOf(state.selected);
  const next = at < 0 ? (step > 0 ? 0 : keys.length - 1) : Math.min(keys.length - 1, Math.max(0, at + step));
  select(keys[next]);
}

function openDetails() {
  if (!state.selected) return;
  state.detailsOpen = true;
  loadDetails();
  render();
}

function closeDetails() {
  state.detailsOpen = false;
  render();
  $("list").focus();
}

async function loadDetails() {
  const key = state.selected;
  const session = key && state.sessions.get(key);
  if (!session || !state.api) return;
  if (!state.details || state.details.key !== key) state.details = { key, data: null, error: null };
  try {
    const data = await state.api.details(reference(session));
    if (state.selected !== key) return;
    state.details = { key, data, error: null };
  } catch (error) {
    if (state.selected !== key) return;
    state.details = { key, data: null, error: error.message };
  }
  renderDetails();
}

async function refresh() {
  if (!state.api || state.locked) return;
  say("Refreshing…");
  try {
    await state.api.refresh();
    say("Refreshed");
    if (state.detailsOpen) loadDetails();
  } catch (error) {
    say(`Refresh failed: ${error.message}`, true);
  }
}

/**
 * Park, await or resume the session on purpose (docs/states.md §4 intent): a reason is asked for, since a
 * parked session keeps its quiet reason and someone will read it later.
 */
function intentNode(session) {
  const intent = session.session_state ? session.session_state.intent : null;
  const current = intent && intent.state ? intent.state : "none";
  return el(
    "form",
    {
      class: "intent",
      id: "intent-form",
      "aria-label": "Park or await",
      onsubmit: (event) => {
        event.preventDefault();
        setIntent("parked");
      },
    },
    el("input", {
      type: "text",
      id: "intent-reason",
      placeholder: "Why? (e.g. waiting for review)",
      "aria-label": "Reason",
      value: state.intentDraft.key === state.selected ? state.intentDraft.text : "",
      oninput: (event) => {
        state.intentDraft = { key: state.selected, text: event.target.value };
      },
    }),
    el("button", { type: "submit", id: "park" }, "Park"),
    el("button", { type: "button", id: "await-ci", onclick: () => setIntent("awaiting", "ci_or_deploy") }, "Await CI"),
    current !== "none" ? el("button", { type: "button", id: "resume", onclick: () => setIntent("none") }, "Resume") : null,
  );
}

async function setIntent(intentState, awaitingWho) {
  const session = state.selected && state.sessions.get(state.selected);
  if (!session || !state.api) return;
  const reason = state.intentDraft.key === state.selected ? state.intentDraft.text.trim() : "";
  if (intentState !== "none" && !reason) {
    say("Give a reason first", true);
    return;
  }
  const intent = { state: intentState };
  if (reason && intentState !== "none") intent.reason = reason;
  if (awaitingWho) intent.awaiting_who = awaitingWho;
  try {
    await state.api.setIntent(session.id, intent);
    state.intentDraft = { key: null, text: "" };
    say(intentState === "none" ? "Resumed" : intentState === "parked" ? "Parked" : "Awaiting");
    loadDetails();
  } catch (error) {
    say(`Could not change the intent: ${error && error.message ? error.message : error}`, true);
  }
}

/** Mutes or unmutes the selected session: it still counts, and no notification tells of it. */
async function setMuted(muted) {
  const session = state.selected && state.sessions.get(state.selected);
  if (!session || !state.api) return;
  try {
    await state.api.setMuted(session.id, muted);
    say(muted ? "Muted: no notifications for this session" : "Unmuted");
    loadDetails();
  } catch (error) {
    say(`Could not ${muted ? "mute" : "unmute"}: ${error && error.message ? error.message : error}`, true);
  }
}

async function focusSelected() {
  const session = state.selected && state.sessions.get(state.selected);
  if (!session || !state.api || !state.api.canFocus) return;
  try {
    await state.api.focus(reference(session));
  } catch (error) {
    say(`Could not focus: ${error && error.message ? error.message : error}`, true);
  }
}

// ---------------------------------------------------------------------------------------------
// The live list.

/** Whether the server sent something that can be listed: the server decides what is on the list. */
function listable(session) {
  return Boolean(session && session.id);
}

function replaceAll(sessions) {
  state.sessions = new Map(sessions.filter(listable).map((s) => [sessionKey(s), s]));
  state.loaded = true;
  afterChange();
}

function afterChange() {
  if (state.selected && !state.sessions.has(state.selected)) {
    // The selected session left the live list: its details go with it.
    state.selected = null;
    state.detailsOpen = false;
  }
  // An outcome belongs to the dialog it answered: once that dialog has left the screen, a later
  // one (even the same question again) starts without it.
  for (const [key, given] of state.answers) {
    const session = state.sessions.get(key);
    const dialog = session && dialogOf(session);
    if (!given.busy && (!dialog || dialog.fingerprint !== given.fingerprint)) state.answers.delete(key);
  }
  if (!state.selected && state.sessions.size) state.selected = sessionKey(ordered(state.sessions.values())[0]);
  if (!state.health) readHealth();
  // The empty state lists the agents; ask again while the server has not answered.
  if (!state.sessions.size && !state.agents && state.api) loadAgents();
  render();
}

/** Asks the server which agents it looks for, once at a time; redraws with their names. */
let agentsAsked = null;
function loadAgents() {
  if (!agentsAsked) {
    agentsAsked = state.api.agents().then((agents) => {
      agentsAsked = null;
      if (agents) {
        state.agents = agents;
        render();
      }
    });
  }
  return agentsAsked;
}

/** Reads `/health` again for the config's error, which comes and goes with the file. */
function readHealth() {
  if (!state.api || state.locked) return;
  state.api
    .health()
    .then((health) => {
      state.health = health;
      render();
    })
    .catch(() => {});
}

function onKey(event) {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const onControl = event.target instanceof HTMLElement && event.target.closest("button, a, input, textarea, select");
  // Letters typed into a text field are text, not shortcuts; Esc still leaves the field.
  const typing = event.target instanceof HTMLElement && event.target.closest("input, textarea");
  if (typing && event.key !== "Escape") return;
  switch (event.key) {
    case "ArrowDown":
    case "j":
      move(1);
      break;
    case "ArrowUp":
    case "k":
      move(-1);
      break;
    case "Home":
      move(-Infinity);
      break;
    case "End":
      move(Infinity);
      break;
    case "Enter":
      // A focused button keeps Enter for itself.
      if (onControl) return;
      if (!state.detailsOpen) openDetails();
      else focusSelected();
      break;
    case "Escape":
      if (!state.detailsOpen) return;
      closeDetails();
      break;
    case "r":
      refresh();
      break;
    default:
      return;
  }
  event.preventDefault();
}

/** Stops the page at the message that says how to open it with the token. */
function lock(why) {
  state.locked = why;
  state.connection = "locked";
  render();
}

async function start() {
  document.addEventListener("keydown", onKey);
  $("refresh").addEventListener("click", () => refresh());
  setInterval(tick, CLOCK_TICK_MS);
  // A window that was hidden (or a machine that slept) shows current times at once on return.
  document.addEventListener("visibilitychange", tick);
  render();
  let endpoint;
  try {
    endpoint = await resolveEndpoint(window);
  } catch (error) {
    say(`Cannot find Slate's API: ${error && error.message ? error.message : error}`, true);
    return;
  }
  state.api = new Api(endpoint);
  document.body.classList.toggle("can-focus", state.api.canFocus);
  if (!endpoint.token) return lock("This page needs Slate's token to show your sessions, and it was opened without one.");
  // The agents' names come from the server; the list waits for them so no row shows an id first.
  await loadAgents();
  state.api.subscribe({
    onSnapshot(sessions) {
      state.snapshotSeen = true;
      replaceAll(sessions);
      readHealth();
    },
    onSession(session) {
      const key = sessionKey(session);
      // Every session the server sends is on its live list, closed ones it keeps included; the
      // server sends `removed` when one leaves.
      if (listable(session)) state.sessions.set(key, session);
      state.loaded = true;
      afterChange();
      // The open details follow their session: new evidence comes with a new state.
      if (state.detailsOpen && key === state.selected) loadDetails();
    },
    onRemoved(key) {
      state.sessions.delete(sessionKey(key));
      afterChange();
    },
    onConnection(connection, detail) {
      if (connection === "unauthorized") return lock(`Slate refused the token this page was opened with (${detail.message}): open the address it prints again.`);
      state.connection = connection;
      state.retryInMs = detail && detail.inMs ? detail.inMs : 0;
      if (connection === "unproven") state.unproven = detail.message;
      else if (connection !== "connecting") state.unproven = null;
      renderHeader();
    },
  });
  // The one-shot list fills the window at once should the stream be slow to open; the stream's
  // snapshot, whenever it comes, wins.
  state.api
    .liveSessions()
    .then((sessions) => {
      if (!state.snapshotSeen) replaceAll(sessions);
    })
    .catch(() => {});
}

start();
