//! The page test's fake API and its data: the recorded sessions from `ui/test/fixtures/`, moved
//! in time so that their relative times read the same on every run, and a small server with the
//! contract's routes over in-memory state, plus a stream the test can push into. Like the real
//! server, it proves it holds the token when challenged (`GET /auth/challenge`, with no token),
//! answers every API request, reads included, only with the bearer token, and keeps
//! what each request carried; its stream writes CRLF line ends, comments and data over several
//! lines, which the page must read as the format allows. It also serves the page's own files from
//! `ui/`, as they are: with no token in them. Used by `run.mjs`.

import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import http from "node:http";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const UI = resolve(HERE, "..");
const FIXTURES = join(HERE, "fixtures");
export const TOKEN = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/**
 * The server's proof that it holds `token`, as `src/api/challenge.rs` makes it (with Node's own
 * HMAC, not the page's): the hex HMAC-SHA256, keyed with the token, of
 * `slate-page-proof|<bound ip:port>|<nonce>`.
 */
export function proofOf(token, bound, nonce) {
  return createHmac("sha256", token).update(`slate-page-proof|${bound}|${nonce}`).digest("hex");
}

// Fixture sessions. Each recorded session is moved in time so that its row time lies a chosen age
// before now: the relative times in the window then read the same on every run.

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

function shiftTimes(value, deltaMs) {
  if (typeof value === "string" && ISO.test(value)) return new Date(Date.parse(value) + deltaMs).toISOString();
  if (Array.isArray(value)) return value.map((item) => shiftTimes(item, deltaMs));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, shiftTimes(item, deltaMs)]));
  }
  return value;
}

function loadFixture(name) {
  return JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), "utf8"));
}

/** A recorded session (and its details) whose row time is `ageMs` before `now`. */
export function aged(name, ageMs, now, change = (s) => s) {
  const fixture = loadFixture(name);
  const delta = now - ageMs - Date.parse(fixture.session.row_time);
  const session = change(shiftTimes(fixture.session, delta));
  const details = shiftTimes(fixture.details, delta);
  details.session = session;
  return { session, details };
}

/**
 * A waiting variant of a recorded session, for reason kinds the recordings do not (yet) cover:
 * same shape, another agent, id, project and reason. Marked `derived` only in this script.
 */
export function variant({ agent, id, project, branch, reason, hosted = false, extra = {} }) {
  return (fixture) => {
    const session = structuredClone(fixture);
    Object.assign(session, { agent, id, project, folder: `/home/dev/src/${project}`, hosted, ...extra });
    if (branch !== undefined) session.branch = branch;
    session.transcript = `/home/dev/.${agent}/sessions/${id}.jsonl`;
    if (reason) {
      session.status = "waiting";
      session.session_state.status = "waiting";
      session.session_state.reason = reason;
      session.session_state.activity = "between_turns";
      session.session_state.next_actor = {
        actor: "operator",
        reason: `a pending decision: ${reason.text}`,
        since: session.row_time,
      };
    }
    return session;
  };
}

export function world(now) {
  const permission = aged("permission", 12_300, now, (s) => ({ ...s, ahead: 2 }));
  permission.details.needs_you_ms = 754_000;
  permission.details.transitions = [
    {
      key: { agent: permission.session.agent, id: permission.session.id },
      from: null,
      to: "working",
      reason: { code: "prompt", text: "A prompt was sent" },
      at: new Date(now - 40_000).toISOString(),
    },
    {
      key: { agent: permission.session.agent, id: permission.session.id },
      from: "working",
      to: "waiting",
      reason: permission.session.session_state.reason,
      at: new Date(now - 12_000).toISOString(),
    },
  ];
  const question = aged("question", 3 * 60_000, now);
  const finished = aged("finished", 8 * 60_000, now, (s) => ({ ...s, branch: "fix/login-timeout", ahead: 1, behind: 4, dirty: 3 }));
  const interrupted = aged(
    "finished",
    25 * 60_000,
    now,
    variant({
      agent: "codex",
      id: "019a7c2e-5b1d-7f30-9e41-2c8d6a0b4f17",
      project: "web-shop",
      branch: "feature/cart",
      reason: { code: "interrupted", text: "Interrupted by the user" },
      hosted: true,
      extra: { title: "Add the cart total to the checkout page", last_prompt: "Add the cart total to the checkout page", model: "gpt-5.3-codex", cli_version: "0.171.0", dirty: 1 },
    }),
  );
  const quiet = aged(
    "tool_running",
    2 * 3600_000,
    now,
    variant({
      agent: "gemini-cli",
      id: "6c1f0d7a-93b2-4e55-a0f8-1d2e3c4b5a69",
      project: "docs-site",
      branch: "main",
      reason: { code: "quiet_call", text: "A tool call has been quiet for 2 h" },
      extra: { title: "Regenerate the API reference", last_prompt: "Regenerate the API reference", model: "gemini-3-pro", cli_version: "0.61.0" },
    }),
  );
  const titleStopped = aged(
    "tool_running",
    40_000,
    now,
    variant({
      agent: "opencode",
      id: "ses_5f2a9c1b7e3dAqP4yN8sLkR2vW",
      project: "infra",
      branch: "ops/terraform-upgrade",
      reason: { code: "title_stopped", text: "The terminal title stopped moving" },
      hosted: true,
      extra: { title: "Upgrade the Terraform providers", last_prompt: "Upgrade the Terraform providers", model: "anthropic/claude-sonnet-5", cli_version: "1.18.33" },
    }),
  );
  const working = aged("tool_running", 5_000, now);
  const all = [permission, question, finished, interrupted, quiet, titleStopped, working];
  for (const entry of all) entry.details.session = entry.session;
  // An older server's session: no `session_state`, only the top-level status.
  const oldQuestion = aged("question", 90_000, now, (s) => {
    const copy = structuredClone(s);
    delete copy.session_state;
    copy.id = "7d3e9a10-0c4b-4a8e-9f21-5b6c7d8e9f00";
    copy.project = "legacy-app";
    return copy;
  });
  oldQuestion.details = { session: oldQuestion.session, evidence: [], transitions: [] };
  return { permission, question, finished, interrupted, quiet, titleStopped, working, all, oldQuestion };
}

// ---------------------------------------------------------------------------------------------
// The fake API: the contract's routes over in-memory state, plus a stream the test can push into.

/** The fake API on `port` (0: any free one), on 127.0.0.1. */
export function startFakeApi({ port = 0 } = {}) {
  const api = {
    sessions: [],
    details: new Map(),
    streams: new Set(),
    refreshes: [],
    intents: [],
    mutes: [],
    focusCalls: [],
    detailsAsked: [],
    /** Every API request (not the page's files, not a preflight): `{method, path, authorization}`. */
    requests: [],
    /** Every `GET /auth/challenge`: `{nonce, authorization}`. */
    challenges: [],
    /** Every `POST /sessions/{id}/respond`: `{id, authorization, body}`, and how to reply to the next. */
    responds: [],
    respondReply: { status: 200, body: { outcome: "answered", action: "approve", option: 1, left_after_ms: 60 }, delayMs: 0 },
    health: {
      version: "0.1.0-test",
      // The engine's roots with the agents' names, as `/health` sends them, plus an agent no
      // built-in table knows: the page must take every name from here.
      roots: [
        { agent: "claude-code", name: "Claude Code", product: "Claude Code", path: "/home/dev/.claude", found: true },
        { agent: "codex", name: "Codex", product: "Codex", path: "/home/dev/.codex", found: false },
        { agent: "gemini-cli", name: "Gemini", product: "Gemini CLI", path: "/home/dev/.gemini", found: false },
        { agent: "opencode", name: "OpenCode", product: "OpenCode", path: "/home/dev/.local/share/opencode", found: false },
        { agent: "cursor-agent", name: "Cursor", product: "cursor-agent", path: "/home/dev/.cursor", found: false },
        { agent: "toy-agent", name: "Toy", product: "Toy Agent", path: "/home/dev/.toy", found: true },
      ],
      problems: {},
      live_sessions: 0,
      needs_you: 0,
      store_recovered_from: null,
      settings: { file: "/home/dev/.config/slate/config.toml", error: null, restart_needed: [] },
    },
    port: 0,
    /** When each stream request came, and how many more to refuse (the reconnect check). */
    streamAttempts: [],
    refuseStreams: 0,
    /** How far the payloads are moved forward in time when served; see `load`. */
    shiftMs: 0,
    setWorld(entries) {
      api.sessions = entries.map((entry) => entry.session);
      api.details = new Map(entries.map((entry) => [entry.session.id, entry.details]));
    },
    push(event, data) {
      const same = (s) => s.id === data.id && s.agent === data.agent && (s.machine || null) === (data.machine || null);
      if (event === "session") {
        const at = api.sessions.findIndex(same);
        if (at >= 0) api.sessions[at] = data;
        else api.sessions.push(data);
        const details = api.details.get(data.id);
        if (details) details.session = data;
      }
      if (event === "removed") api.sessions = api.sessions.filter((s) => !same(s));
      for (const res of api.streams) res.write(`event: ${event}\ndata: ${JSON.stringify(shiftTimes(data, api.shiftMs))}\n\n`);
    },
    /** The snapshot as the format allows it too: CRLF, a comment, the JSON over several `data:` lines. */
    snapshot() {
      const lines = JSON.stringify(shiftTimes({ sessions: api.sessions }, api.shiftMs), null, 1).split("\n");
      return `: a comment\r\nevent: snapshot\r\n${lines.map((line) => `data: ${line}\r\n`).join("")}\r\n`;
    },
    dropStreams() {
      for (const res of api.streams) res.destroy();
      api.streams.clear();
    },
  };

  const types = { ".html": "text/html; charset=utf-8", ".css": "text/css", ".js": "text/javascript" };
  const send = (res, status, body, type = "application/json") => {
    res.writeHead(status, { "Content-Type": type, "Cache-Control": "no-store" });
    res.end(typeof body === "string" ? body : JSON.stringify(shiftTimes(body, api.shiftMs)));
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://127.0.0.1");
    const path = url.pathname;
    // The `?api=` check loads the page from one origin and talks to the API on another.
    if (req.headers.origin) {
      res.setHeader("Access-Control-Allow-Origin", req.headers.origin);
      res.setHeader("Access-Control-Allow-Headers", "Authorization, Accept");
      res.setHeader("Access-Control-Allow-Methods", "GET, POST");
    }
    if (req.method === "OPTIONS") return send(res, 204, "");
    // The proof, as the real server gives it: no token needed, the nonce checked, the MAC bound
    // to the address this server listens on.
    if (req.method === "GET" && path === "/auth/challenge") {
      const nonce = url.searchParams.get("nonce") || "";
      api.challenges.push({ nonce, authorization: req.headers.authorization || "" });
      if (!/^[0-9a-f]{64}$/.test(nonce)) return send(res, 400, { error: { code: "bad_request", message: "the challenge needs ?nonce=" } });
      const bound = `127.0.0.1:${api.port}`;
      return send(res, 200, { mac: proofOf(TOKEN, bound, nonce), bound });
    }
    // The page's files, and the icon the browser asks for by itself, are not the API.
    const page = req.method === "GET" && (path === "/" || path === "/ui/" || path === "/favicon.ico" || /^\/(ui\/)?[a-z]+\.(html|css|js)$/.test(path));
    if (!page) {
      api.requests.push({ method: req.method, path, authorization: req.headers.authorization || "" });
      // Every request but the page's files needs the token, reads included.
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return send(res, 401, { error: { code: "unauthorized", message: "this request needs the token" } });
    }
    if (req.method === "GET" && path === "/sessions/live") return send(res, 200, { sessions: api.sessions });
    if (req.method === "GET" && path === "/sessions/live/stream") {
      api.streamAttempts.push(Date.now());
      if (api.refuseStreams > 0) {
        api.refuseStreams -= 1;
        return send(res, 503, { error: { code: "unavailable", message: "not now" } });
      }
      res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-store", Connection: "keep-alive" });
      res.write(api.snapshot());
      api.streams.add(res);
      req.on("close", () => api.streams.delete(res));
      return;
    }
    if (path === "/sessions/live/refresh") {
      if (req.method !== "POST") return send(res, 405, { error: { code: "method_not_allowed", message: "method not allowed" } });
      api.refreshes.push(req.headers.authorization || "");
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return send(res, 401, { error: { code: "unauthorized", message: "missing or wrong token" } });
      return send(res, 204, "");
    }
    if (req.method === "POST" && path.startsWith("/sessions/") && path.endsWith("/mute")) {
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return send(res, 401, { error: { code: "unauthorized", message: "missing or wrong token" } });
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        api.mutes.push({ id: decodeURIComponent(path.slice("/sessions/".length, -"/mute".length)), body: JSON.parse(body) });
        send(res, 204, "");
      });
      return;
    }
    if (req.method === "POST" && path.startsWith("/sessions/") && path.endsWith("/intent")) {
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return send(res, 401, { error: { code: "unauthorized", message: "missing or wrong token" } });
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        api.intents.push({ id: decodeURIComponent(path.slice("/sessions/".length, -"/intent".length)), intent: JSON.parse(body) });
        send(res, 204, "");
      });
      return;
    }
    if (req.method === "POST" && path.startsWith("/sessions/") && path.endsWith("/respond")) {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        let parsed = null;
        try {
          parsed = JSON.parse(body);
        } catch {
          parsed = { unparsed: body };
        }
        api.responds.push({ id: decodeURIComponent(path.slice("/sessions/".length, -"/respond".length)), authorization: req.headers.authorization || "", contentType: req.headers["content-type"] || "", body: parsed });
        if (req.headers.authorization !== `Bearer ${TOKEN}`) return send(res, 401, { error: { code: "unauthorized", message: "missing or wrong token" } });
        const reply = api.respondReply;
        setTimeout(() => send(res, reply.status, reply.body), reply.delayMs || 0);
      });
      return;
    }
    if (req.method === "GET" && path === "/health") return send(res, 200, api.health);
    if (req.method === "GET" && path.startsWith("/sessions/")) {
      // `NAME:ID` names a session on a remote machine, as the real API takes it.
      const asked = decodeURIComponent(path.slice("/sessions/".length));
      api.detailsAsked.push(asked);
      const id = asked.includes(":") ? asked.slice(asked.indexOf(":") + 1) : asked;
      const matches = [...api.details.keys()].filter((key) => key.startsWith(id));
      if (matches.length !== 1) return send(res, 404, { error: { code: "unknown_session", message: `no session ${id}` } });
      return send(res, 200, api.details.get(matches[0]));
    }
    if (req.method === "GET") {
      const name = path === "/" || path === "/ui/" ? "index.html" : path.replace(/^\/(ui\/)?/, "");
      if (!/^[a-z]+\.(html|css|js)$/.test(name)) return send(res, 404, { error: { code: "not_found", message: "not found" } });
      let body;
      try {
        body = readFileSync(join(UI, name), "utf8");
      } catch {
        return send(res, 404, { error: { code: "not_found", message: "not found" } });
      }
      return send(res, 200, body, types[name.slice(name.lastIndexOf("."))]);
    }
    return send(res, 404, { error: { code: "not_found", message: "not found" } });
  });

  return new Promise((done) => {
    server.listen(port, "127.0.0.1", () => {
      api.port = server.address().port;
      api.close = () =>
        new Promise((closed) => {
          api.dropStreams();
          server.closeAllConnections();
          server.close(() => closed());
        });
      done(api);
    });
  });
}
