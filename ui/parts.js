//! The page's elements that need no page state: `el` (text from the server only ever goes into
//! text nodes, never into markup), relative and absolute times, a dialog's whole text, the words
//! for an answer given, and the details pane's facets and transitions.

import { statusOf, statusLabel, ago, span } from "./session.js";

export { usageNode, renderDayUsage } from "./usage.js";

export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** A relative time that the page clock keeps current. */
export function agoNode(ms, suffix = "") {
  if (ms === null) return null;
  const when = new Date(ms);
  return el("time", {
    class: "ago",
    datetime: when.toISOString(),
    "data-at": ms,
    "data-suffix": suffix,
    title: when.toLocaleString(),
    text: ago(ms) + suffix,
  });
}

/** An absolute time with its relative time beside it, for the details pane. */
export function whenNode(iso) {
  const ms = iso ? Date.parse(iso) : NaN;
  if (Number.isNaN(ms)) return iso ? String(iso) : null;
  return el("span", {}, new Date(ms).toLocaleTimeString(), " (", agoNode(ms, " ago"), ")");
}

/**
 * The dialog's whole text (`dialog.detail`: every line of the command as the CLI draws it) where
 * the one-line summary does not hold it all, and a note where the screen showed it cut short (the
 * server then offers no approval: only the terminal can allow it).
 */
export function detailNode(dialog) {
  const lines = Array.isArray(dialog.detail) ? dialog.detail.map(String) : [];
  const summary = dialog.summary || "";
  const whole = !dialog.cut && lines.length <= 1 && lines.every((line) => summary.includes(line));
  if (whole) return null;
  return el(
    "div",
    { class: "dialog-detail" },
    lines.length ? el("pre", { class: "dialog-lines", text: lines.join("\n") }) : null,
    dialog.cut ? el("p", { class: "note dialog-cut", text: "Cut short on screen: allow it in its terminal, or deny it here." }) : null,
  );
}

/** The words for an answer the server reports done. */
export function answeredText(option, result) {
  if (!result || result.outcome !== "answered") return `Sent “${option.label}”: ${(result && result.outcome) || "no outcome reported"}`;
  const done = option.action === "approve" ? "Allowed once" : option.action === "deny" ? "Denied" : `Answered “${option.label}”`;
  return `${done}: the dialog left the screen`;
}

export function facetRow(label, ...value) {
  const parts = value.flat().filter((part) => part !== null && part !== undefined && part !== "");
  if (!parts.length) return null;
  return [el("dt", { text: label }), el("dd", {}, ...parts)];
}

export function code(text) {
  return text ? el("code", { text }) : null;
}

export function facetsNode(session) {
  const facets = session.session_state;
  if (!facets) {
    return el(
      "section",
      { class: "facets", "aria-label": "State" },
      el("h3", { text: "State" }),
      el("dl", {}, facetRow("Status", statusLabel(statusOf(session)))),
      el("p", { class: "note", text: "This server sends no session_state, so only the status is known." }),
    );
  }
  const reason = facets.reason || {};
  const intent = facets.intent || {};
  const custody = facets.custody || {};
  const next = facets.next_actor || {};
  const holds = Array.isArray(custody.holds) && custody.holds.length ? custody.holds.join(", ") : "nothing";
  const flags = [];
  if (custody.holds_work_claim) flags.push("holds a work claim");
  if (custody.reclaimable) flags.push("reclaimable");
  return el(
    "section",
    { class: "facets", "aria-label": "State" },
    el("h3", { text: "State" }),
    el(
      "dl",
      {},
      facetRow("Status", statusLabel(facets.status || statusOf(session))),
      facetRow("Reason", reason.text ? `${reason.text} ` : "", code(reason.code)),
      facetRow("Presence", facets.presence),
      facetRow("Activity", facets.activity ? facets.activity.replace(/_/g, " ") : ""),
      facetRow("Active at", whenNode(facets.active_at)),
      facetRow(
        "Intent",
        intent.state || "none",
        intent.reason ? ` — ${intent.reason}` : "",
        intent.awaiting_who ? ` (awaiting ${intent.awaiting_who.replace(/_/g, " ")})` : "",
      ),
      facetRow("Custody", `holds ${holds}`, flags.length ? `; ${flags.join(", ")}` : "", custody.reason ? ` — ${custody.reason}` : ""),
      facetRow(
        "Next actor",
        next.actor ? next.actor.replace(/_/g, " ") : "",
        next.reason ? ` — ${next.reason}` : "",
        next.since ? el("span", { class: "since" }, " since ", whenNode(next.since)) : null,
      ),
    ),
  );
}

export function transitionsNode(transitions) {
  if (!transitions.length) return el("p", { class: "note", text: "No transitions recorded yet." });
  const recent = [...transitions].sort((a, b) => (Date.parse(b.at) || 0) - (Date.parse(a.at) || 0)).slice(0, 10);
  return el(
    "ol",
    { class: "transitions" },
    recent.map((t) =>
      el(
        "li",
        {},
        // The first status Slate saw for a session has no `from`.
        t.from ? el("span", { class: `pill small status-${t.from}`, text: statusLabel(t.from) }) : "first seen",
        " → ",
        el("span", { class: `pill small status-${t.to}`, text: statusLabel(t.to || "?") }),
        " ",
        el("span", { class: "t-reason", text: typeof t.reason === "string" ? t.reason : (t.reason && (t.reason.text || t.reason.code)) || "" }),
        " ",
        agoNode(Date.parse(t.at) || null, " ago"),
      ),
    ),
  );
}
