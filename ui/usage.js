//! What a session's model calls used and cost, as the window says it: a line per session and the
//! day's total. Every figure says what it is, as the server marks it (`cost_basis`): "reported"
//! (the CLI wrote it), "estimate" (tokens times a dated price table: never a bill; "≥" when some
//! tokens have no price) or no price at all; a session whose agent recorded no usage says "not
//! recorded", never $0. No DOM state: `el` builds the nodes, the caller places them.

import { el } from "./parts.js";

const BILL = "An estimate from a dated price table, not a bill";

/** A token count short: 950, 12.3k, 4.56M. */
export function tokensText(tokens) {
  const n = Number(tokens) || 0;
  if (n < 1000) return String(n);
  if (n < 1e6) return `${(n / 1e3).toFixed(1)}k`;
  return `${(n / 1e6).toFixed(2)}M`;
}

/** A cost and what it is: "$0.12 estimate", "≥ $0.12 estimate", "$0.12 reported", "no price". */
export function costText(usd, basis, unpriced) {
  if (typeof usd !== "number" || !Number.isFinite(usd) || basis === "unknown") return "no price";
  const figure = `$${usd.toFixed(2)}`;
  if (basis === "reported") return `${figure} reported`;
  return `${unpriced > 0 ? "≥ " : ""}${figure} estimate`;
}

/** One session's usage as the row says it. */
export function usageText(session) {
  const usage = session && session.usage;
  if (!usage || typeof usage !== "object") return "usage not recorded";
  const tokens = (usage.input_tokens || 0) + (usage.output_tokens || 0) + (usage.cache_read_tokens || 0) + (usage.cache_write_tokens || 0);
  const context = typeof usage.context_percent === "number" ? ` · context ${usage.context_percent}%` : "";
  return `${tokensText(tokens)} tokens · ${costText(usage.cost_usd, usage.cost_basis, usage.unpriced_tokens)}${context}`;
}

/** The row's usage mark. */
export function usageNode(session) {
  const usage = session && session.usage;
  const basis = usage ? usage.cost_basis : "not-recorded";
  const title = !usage ? "Its agent records no usage" : basis === "reported" ? "The cost the CLI wrote" : basis === "estimate" ? BILL : "Tokens only: no price for this model";
  return el("span", { class: `usage usage-${basis}`, title, text: usageText(session) });
}

/** The UTC day (`YYYY-MM-DD`) of a time in milliseconds. */
function dayOf(ms) {
  return new Date(ms).toISOString().slice(0, 10);
}

/**
 * The day's total over `sessions` (those whose last activity is in today's UTC day, as the
 * server's `/usage` counts them): its sum, whether it is reported, an estimate or a floor, and how
 * many sessions recorded nothing.
 */
export function dayTotal(sessions, now = Date.now()) {
  const today = dayOf(now);
  const total = { sessions: 0, notRecorded: 0, usd: null, costed: 0, reported: 0, unpriced: 0 };
  for (const session of sessions) {
    const at = session.row_time ? Date.parse(session.row_time) : now;
    if (Number.isNaN(at) || dayOf(at) !== today) continue;
    total.sessions += 1;
    const usage = session.usage;
    if (!usage || typeof usage !== "object") {
      total.notRecorded += 1;
      continue;
    }
    if (typeof usage.cost_usd === "number" && usage.cost_basis !== "unknown") {
      total.usd = (total.usd || 0) + usage.cost_usd;
      total.costed += 1;
      if (usage.cost_basis === "reported") total.reported += 1;
      total.unpriced += usage.unpriced_tokens || 0;
    } else {
      total.unpriced += (usage.input_tokens || 0) + (usage.output_tokens || 0) + (usage.cache_read_tokens || 0) + (usage.cache_write_tokens || 0);
    }
  }
  const basis = total.costed === 0 ? "unknown" : total.reported === total.costed && total.unpriced === 0 ? "reported" : "estimate";
  return { ...total, basis };
}

/** Writes the day's total into `node`: "Today (UTC): ≥ $1.23 estimate · 3 sessions". */
export function renderDayUsage(node, sessions, now = Date.now()) {
  if (!node) return;
  const total = dayTotal([...sessions], now);
  node.hidden = total.sessions === 0;
  const cost = total.costed === 0 ? (total.notRecorded === total.sessions ? "usage not recorded" : "no price") : costText(total.usd, total.basis, total.unpriced);
  const plural = total.sessions === 1 ? "session" : "sessions";
  node.textContent = `Today (UTC): ${cost} · ${total.sessions} ${plural}`;
  node.title = total.basis === "reported" ? "The costs the CLIs wrote" : BILL;
  node.dataset.basis = total.basis;
}
