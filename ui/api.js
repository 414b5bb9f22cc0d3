//! The page's only link to Slate's backend: where the loopback API lives, the bearer token, the
//! one-shot requests and the live stream (see the API contract). It knows the wire and nothing about
//! how a session is drawn; it never decides a session's state, it only passes on what the server says.
//!
//! Every request carries `Authorization: Bearer <token>`, reads included: the API shows a session's
//! text and a dialog's fingerprint only to who holds the token. So the live stream is read with
//! `fetch()` and `sse.js`, not with `EventSource`, which cannot send a header.
//!
//! Where the API lives, in order: a `?api=http://127.0.0.1:PORT` query parameter (tests, or a page
//! opened by hand against another server); inside the desktop app, whatever the shell answers to
//! `invoke('api_endpoint')`; otherwise the page's own origin (`slate serve` serves the page).
//!
//! Before the token goes anywhere, the server proves it holds it (`proveServer`): a loopback port
//! belongs to whoever binds it first, and a browser cannot ask who that is. The page sends a
//! random nonce with no token; the server answers the HMAC-SHA256, keyed with the token, of the
//! nonce and the address it is bound to; the page checks it with WebCrypto against the address it
//! connected to. A stranger's listener on the port, which holds no token, cannot answer, nor can
//! one that passes the challenge on to this user's Slate on another port: that MAC names the other
//! port. Until a server proves itself, nothing that carries the token is sent, and the page says so.
//!
//! Where the token comes from: inside the desktop app, the shell's answer. In a browser, the
//! address's fragment, `#token=…`, which `slate serve` prints when it starts: a fragment is never
//! sent to a server, so no server, proxy or log sees it. The page keeps it in `sessionStorage`
//! (this tab only, gone when the tab closes) and takes it out of the address bar at once. The
//! server never writes the token into the page it serves: any local user can fetch that page.

import { EventStreamParser } from "./sse.js";

/** The longest wait between two attempts to reopen the stream. */
const MAX_BACKOFF_MS = 30_000;
/** The first wait after the stream drops; doubled after each failed attempt. */
const FIRST_BACKOFF_MS = 1_000;
/**
 * How long an open stream may stay silent before it is taken for dead and reopened: the server
 * sends a keep-alive comment every 15 s (docs/api.md), so three missed ones mean a lost link.
 */
const STREAM_SILENCE_MS = 45_000;
/** Where this tab keeps the token it was opened with. */
const TOKEN_KEY = "slate-token";

/** The Tauri bridge when the page runs inside the desktop app, else null. */
function tauriCore(win) {
  const tauri = win.__TAURI__;
  return tauri && tauri.core && typeof tauri.core.invoke === "function" ? tauri.core : null;
}

/**
 * What a token must look like to go into a header: printable ASCII without spaces (Slate's own
 * is 64 hex digits). Anything else is no token, rather than a header `fetch` refuses.
 */
function usable(token) {
  return typeof token === "string" && /^[\x21-\x7e]{1,512}$/.test(token) ? token : null;
}

function storage(win) {
  try {
    return win.sessionStorage;
  } catch {
    // A browser that refuses storage to this page: the token then lasts until a reload.
    return null;
  }
}

/**
 * Takes `token=…` out of the address's fragment: keeps it in this tab's `sessionStorage` and
 * rewrites the address without it (the rest of the fragment stays), so it is neither shown,
 * bookmarked nor in the history. Returns the token found, or null.
 */
export function takeFragmentToken(win = window) {
  const hash = win.location.hash.replace(/^#/, "");
  if (!hash) return null;
  const params = new URLSearchParams(hash);
  if (!params.has("token")) return null;
  const token = usable(params.get("token"));
  params.delete("token");
  const rest = params.toString();
  const address = win.location.pathname + win.location.search + (rest ? `#${rest}` : "");
  win.history.replaceState(win.history.state, "", address);
  const store = storage(win);
  if (token && store) {
    try {
      store.setItem(TOKEN_KEY, token);
    } catch {
      // Storage full or refused: the token still serves this load.
    }
  }
  return token;
}

/** The token this tab was opened with: from the address now, or kept from an earlier load. */
function browserToken(win) {
  const fresh = takeFragmentToken(win);
  if (fresh) return fresh;
  const store = storage(win);
  return store ? usable(store.getItem(TOKEN_KEY)) : null;
}

/**
 * Finds the API's base URL and token: `{base, token, tauri, servedBy}`.
 * The token is null when the page was opened without one (a browser, not from the address
 * `slate serve` prints): the page then asks for it rather than reading. `servedBy` is what the
 * desktop shell says serves the API: "app" (its own engine) or "service" (the Slate service it
 * uses instead of an engine of its own); null outside the shell.
 *
 * An address pasted into the open tab with a new `#token=…` loads the page again with it.
 */
export async function resolveEndpoint(win = window) {
  const params = new URLSearchParams(win.location.search);
  const override = params.get("api");
  const core = tauriCore(win);
  // Taken out of the address first, whatever else the page finds.
  const token = browserToken(win);
  win.addEventListener("hashchange", () => {
    if (takeFragmentToken(win)) win.location.reload();
  });
  if (override) {
    return { base: trimSlash(override), token, tauri: core, servedBy: null };
  }
  if (core) {
    try {
      const answer = await core.invoke("api_endpoint");
      if (answer && answer.base) {
        return {
          base: trimSlash(String(answer.base)),
          token: usable(answer.token),
          tauri: core,
          servedBy: typeof answer.served_by === "string" ? answer.served_by : null,
        };
      }
    } catch {
      // A shell without the command serves the page itself, like `slate serve`: fall through.
    }
  }
  return { base: trimSlash(win.location.origin), token, tauri: core, servedBy: null };
}

function trimSlash(url) {
  return url.replace(/\/+$/, "");
}

/** What the server's proof starts with (src/api/challenge.rs), so the MAC means nothing else. */
const PROOF_CONTEXT = "slate-page-proof";

/** A URL's host as a socket address is written: always with its port, IPv6 in brackets. */
function addressOf(url) {
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return `${url.hostname}:${port}`;
}

/** True for a host that is an address, not a name: dotted IPv4, or IPv6 in brackets. */
function isAddress(hostname) {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(hostname) || /^\[[0-9a-f:.]+\]$/i.test(hostname);
}

/** True for a loopback socket address (`127.x.y.z:port`, `[::1]:port`) with the given port. */
function loopbackWithPort(address, port) {
  const found = /^(?:127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\]):(\d{1,5})$/.exec(address);
  return !!found && found[1] === port;
}

function hex(bytes) {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** An `ApiError` (code `unproven`) for a server that answered but did not prove it holds the token. */
function unproven(host, why) {
  return new ApiError(`the server at ${host} could not prove it is your Slate: nothing was sent (${why})`, 0, "unproven");
}

/**
 * Proves that the server at `base` holds `token` without sending it (the module's paragraph), and
 * resolves to the base URL the token may go to: `base`, or, when `base` names `localhost`, the
 * loopback address the server proved itself at, asked again there (the browser picks 127.0.0.1
 * or ::1 for a name, so a proof for either could come from the other's listener). Rejects with an
 * `ApiError` of code `unproven` when the server answers but proves nothing, or the browser offers
 * no WebCrypto here; and with `fetch`'s own error when nothing answers. `win` gives `crypto`.
 *
 * The page proves the server before every request that carries the token and before every
 * (re)opening of the stream, rather than once per page load: a listener changes only between
 * connections, and any request may go over a new connection, so an old proof says nothing of the
 * next one. The request right after a proof usually goes over the same kept-alive connection, and
 * a proof costs one loopback round trip and one HMAC, for requests that come at a person's pace.
 */
export async function proveServer(base, token, { win = globalThis, signal } = {}) {
  base = trimSlash(base);
  const url = new URL(base);
  const shown = addressOf(url);
  const subtle = win.crypto && win.crypto.subtle;
  if (!subtle || typeof win.crypto.getRandomValues !== "function") {
    throw unproven(shown, "this browser offers no WebCrypto to this page, which it needs to check the server's proof; open the page at http://127.0.0.1:PORT/ or http://localhost:PORT/");
  }
  const nonce = hex(win.crypto.getRandomValues(new Uint8Array(32)));
  const response = await fetch(`${base}/auth/challenge?nonce=${nonce}`, { headers: { Accept: "application/json" }, cache: "no-store", signal });
  let answer = null;
  if (response.ok) {
    try {
      answer = await response.json();
    } catch {
      // Not JSON: no proof.
    }
  }
  if (!answer || typeof answer.mac !== "string" || !/^[0-9a-f]{64}$/.test(answer.mac)) {
    throw unproven(shown, response.ok ? "it answered the challenge with no proof" : `it answered the challenge with ${response.status}`);
  }
  if (!isAddress(url.hostname)) {
    const bound = typeof answer.bound === "string" ? answer.bound : "";
    if (url.hostname !== "localhost" || !loopbackWithPort(bound, shown.slice(shown.lastIndexOf(":") + 1))) {
      throw unproven(shown, "it names no loopback address with this port to prove itself at");
    }
    return proveServer(`${url.protocol}//${bound}`, token, { win, signal });
  }
  const encode = (text) => new TextEncoder().encode(text);
  const key = await subtle.importKey("raw", encode(token), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  const mac = Uint8Array.from(answer.mac.match(/../g), (pair) => parseInt(pair, 16));
  // `verify` compares in the browser's own code, in time that does not depend on where they differ.
  const proven = await subtle.verify("HMAC", key, mac, encode(`${PROOF_CONTEXT}|${shown}|${nonce}`));
  if (!proven) {
    throw unproven(shown, "its proof is not of this page's token: another program holds the port, or this page's token is old, and the address Slate prints brings the new one");
  }
  return base;
}

/**
 * An error the server answered with, in the one shape every error of the API has
 * (`{"error":{"code":"…","message":"…"}}`), or a failed request. `code` is the error's code
 * (`dialog_changed`, `cannot_type`, `unauthorized`, …), null when the answer carried none.
 */
export class ApiError extends Error {
  constructor(message, status, code = null) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
  }
}

async function errorOf(response) {
  let message = `${response.status} ${response.statusText}`.trim();
  let code = null;
  try {
    const error = (await response.json()).error;
    if (error && typeof error.message === "string" && error.message) message = error.message;
    if (error && typeof error.code === "string") code = error.code;
  } catch {
    // A body that is not JSON keeps the status line as the message.
  }
  return new ApiError(message, response.status, code);
}

/**
 * The key a session is known by on the page: sessions of two agents may share an id, and so may
 * sessions on two machines (`machine` is null, or absent, for this machine's; a `removed` event
 * carries it the same way).
 */
export function sessionKey(session) {
  const machine = session.machine ? `${session.machine}/` : "";
  return `${machine}${session.agent}:${session.id}`;
}

/** How the API names a session: its id, or `NAME:ID` for one on a remote machine. */
export function reference(session) {
  return session.machine ? `${session.machine}:${session.id}` : session.id;
}

export class Api {
  /** @param {{base: string, token: string|null, tauri: object|null, servedBy?: string|null}} endpoint */
  constructor(endpoint) {
    this.base = endpoint.base;
    this.token = endpoint.token;
    this.tauri = endpoint.tauri;
    this.servedBy = endpoint.servedBy || null;
  }

  /** True when the desktop app shows the Slate service's sessions rather than its own engine's. */
  get usesService() {
    return this.servedBy === "service";
  }

  /** `headers` with the bearer token added: every request carries it, reads included. */
  #headers(headers = {}) {
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    return headers;
  }

  /**
   * Where a request with the token may go: the base URL once the server there proved it holds the
   * token (`proveServer`, before every request). With no token there is nothing to keep.
   */
  async #proven(signal) {
    return this.token ? proveServer(this.base, this.token, { signal }) : this.base;
  }

  /** One request to the API: throws an `ApiError` unless the answer is 2xx. */
  async #call(path, { method = "GET", headers = {}, body } = {}) {
    const base = await this.#proven();
    const response = await fetch(base + path, { method, headers: this.#headers(headers), body, cache: "no-store" });
    if (!response.ok) throw await errorOf(response);
    return response;
  }

  async #getJson(path) {
    return (await this.#call(path, { headers: { Accept: "application/json" } })).json();
  }

  async #postJson(path, body) {
    return this.#call(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  }

  /** `GET /sessions/live`: the live list, as an array of session objects. */
  async liveSessions() {
    const body = await this.#getJson("/sessions/live");
    return Array.isArray(body.sessions) ? body.sessions : [];
  }

  /**
   * `GET /sessions/{id}`: `{session, evidence, transitions, needs_you_ms?}`. Evidence is also
   * accepted inside the session object, where `slate show --json` puts it. `needsYouMs` is the
   * time spent in Needs you in all, or null when the server keeps no history.
   */
  async details(id) {
    const body = await this.#getJson(`/sessions/${encodeURIComponent(id)}`);
    const session = body.session || {};
    const evidence = Array.isArray(body.evidence)
      ? body.evidence
      : Array.isArray(session.evidence)
        ? session.evidence
        : [];
    return {
      session,
      evidence: evidence.map((line) => (typeof line === "string" ? line : line && line.fact ? line.fact : String(line))),
      transitions: Array.isArray(body.transitions) ? body.transitions : [],
      needsYouMs: typeof body.needs_you_ms === "number" ? body.needs_you_ms : null,
    };
  }

  /** `GET /health`, or null when the server does not answer it. */
  async health() {
    try {
      return await this.#getJson("/health");
    } catch {
      return null;
    }
  }

  /**
   * The remote machines' links, from `GET /health`'s `remotes`: one `{name, destination, status,
   * since, error?, sessions}` per `[[remote]]` of the config (an older server sends none).
   */
  static remotesOf(health) {
    return health && Array.isArray(health.remotes) ? health.remotes.filter((remote) => remote && remote.name) : [];
  }

  /**
   * The agents the server looks for, from `GET /health`'s `roots`: one `{agent, name, product,
   * path, found}` per agent root, in the server's order (`name` is the short name, `product` the
   * agent's own; an older server sends neither). Null when the server does not answer.
   */
  async agents() {
    const health = await this.health();
    if (!health) return null;
    return Array.isArray(health.roots) ? health.roots.filter((root) => root && root.agent) : [];
  }

  /** `POST /sessions/live/refresh`; resolves once the re-read is published. */
  async refresh() {
    await this.#call("/sessions/live/refresh", { method: "POST" });
  }

  /**
   * `POST /sessions/{id}/intent`: park (`{state: "parked", reason}`), await (`{state: "awaiting",
   * reason, awaiting_who}`) or resume (`{state: "none"}`) a session.
   */
  async setIntent(id, intent) {
    await this.#postJson(`/sessions/${encodeURIComponent(id)}/intent`, intent);
  }

  /**
   * `POST /sessions/{id}/mute`: `{muted: true}` mutes a session (no notification tells of it; it
   * still counts), `{muted: false}` unmutes it.
   */
  async setMuted(id, muted) {
    await this.#postJson(`/sessions/${encodeURIComponent(id)}/mute`, { muted });
  }

  /**
   * `POST /sessions/{id}/respond`: answers the dialog the page showed.
   * `answer` is `{action, option?, dialog}` where `dialog` is the fingerprint the page displayed;
   * the page always names itself as the `window` surface. Resolves to the server's
   * `{outcome, action, option?, left_after_ms?}`; a refusal throws an `ApiError` with its code.
   */
  async respond(id, answer) {
    const body = { action: answer.action };
    if (answer.option !== undefined && answer.option !== null) body.option = answer.option;
    body.dialog = answer.dialog;
    body.surface = "window";
    const response = await this.#call(`/sessions/${encodeURIComponent(id)}/respond`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify(body),
    });
    return response.json();
  }

  /** Whether this page can raise a session's terminal: only the desktop shell can. */
  get canFocus() {
    return this.tauri !== null;
  }

  /** Asks the desktop shell to raise the terminal that hosts a session. */
  async focus(id) {
    if (!this.tauri) throw new ApiError("focusing a terminal needs the desktop app", 0);
    return this.tauri.invoke("focus_session", { id });
  }

  /**
   * Opens the live stream and keeps it open: when it drops, ends, stays silent past
   * `STREAM_SILENCE_MS` or is refused, it is reopened after a growing pause (1 s, 2 s, 4 s … 30 s),
   * and the first `snapshot` after a reopen replaces the whole list. A stream refused for its
   * token (401) is not retried: another try would be refused the same.
   * Handlers: onSnapshot(sessions), onSession(session), onRemoved({agent, id, machine?}),
   * onConnection(state, detail) with state "connecting" | "open" | "retrying" (detail `{inMs}`) |
   * "unproven" (the server did not prove it holds the token, so nothing was sent to it; detail
   * `{inMs, message}`) | "unauthorized" (detail the `ApiError`). Returns a function that closes the stream.
   * `timing` is for tests: `{silenceMs}`.
   */
  subscribe(handlers, timing = {}) {
    const silenceMs = timing.silenceMs || STREAM_SILENCE_MS;
    let current = null;
    let timer = null;
    let backoff = FIRST_BACKOFF_MS;
    let closed = false;
    const notify = (state, detail) => handlers.onConnection && handlers.onConnection(state, detail);

    const parse = (data) => {
      try {
        return JSON.parse(data);
      } catch {
        return null;
      }
    };

    const dispatch = (event) => {
      if (event.type === "snapshot") {
        const body = parse(event.data);
        if (!body) return;
        // A snapshot proves the stream works: the next drop starts the pauses from the beginning.
        backoff = FIRST_BACKOFF_MS;
        notify("open");
        handlers.onSnapshot(Array.isArray(body.sessions) ? body.sessions : []);
      } else if (event.type === "session") {
        const session = parse(event.data);
        if (session && session.id) handlers.onSession(session);
      } else if (event.type === "removed") {
        const key = parse(event.data);
        if (key && key.id) handlers.onRemoved(key);
      }
    };

    /**
     * One attempt's request: `stop()` ends it wherever it is, the request aborted and the body's
     * read cancelled (a read waiting on a silent body ends at once, as `done`).
     */
    const attemptOf = () => {
      const abort = new AbortController();
      const attempt = {
        signal: abort.signal,
        reader: null,
        stop() {
          abort.abort();
          if (attempt.reader) attempt.reader.cancel().catch(() => {});
        },
      };
      return attempt;
    };

    /** Reads one stream to its end; resolves when it ends, throws when it cannot be read. */
    const follow = async (attempt, silent) => {
      const base = await this.#proven(attempt.signal);
      const response = await fetch(base + "/sessions/live/stream", {
        headers: this.#headers({ Accept: "text/event-stream" }),
        cache: "no-store",
        signal: attempt.signal,
      });
      if (!response.ok) throw await errorOf(response);
      const type = response.headers.get("Content-Type") || "";
      if (!type.startsWith("text/event-stream") || !response.body) {
        throw new ApiError(`the live stream came as ${type || "no content type"}, not text/event-stream`, response.status);
      }
      const parser = new EventStreamParser(dispatch);
      const reader = response.body.getReader();
      attempt.reader = reader;
      try {
        for (;;) {
          silent.reset();
          const { done, value } = await reader.read();
          if (done || attempt.signal.aborted) break;
          parser.feed(value);
        }
        parser.end();
      } finally {
        reader.cancel().catch(() => {});
      }
    };

    const open = async () => {
      timer = null;
      if (closed) return;
      notify("connecting");
      const attempt = attemptOf();
      current = attempt;
      let quiet = null;
      const silent = {
        reset() {
          clearTimeout(quiet);
          quiet = setTimeout(() => attempt.stop(), silenceMs);
        },
      };
      let refused = null;
      let doubted = null;
      try {
        silent.reset();
        await follow(attempt, silent);
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) refused = error;
        if (error instanceof ApiError && error.code === "unproven") doubted = error;
      } finally {
        clearTimeout(quiet);
      }
      if (closed || current !== attempt) return;
      current = null;
      if (refused) {
        notify("unauthorized", refused);
        return;
      }
      const wait = backoff;
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      // A server that could not prove itself is asked again at the same pace: this user's Slate
      // may come back on its port.
      notify(doubted ? "unproven" : "retrying", { inMs: wait, message: doubted ? doubted.message : null });
      timer = setTimeout(open, wait);
    };

    open();
    return () => {
      closed = true;
      if (timer) clearTimeout(timer);
      if (current) current.stop();
    };
  }
}
