//! The page's only link to Slate's backend: where the loopback API lives, the bearer token, the
//! one-shot requests and the live stream (see the API contract). It knows the wire and nothing about
//! how a session is drawn; it never decides a session's state, it only passes on what the server says.
//!
//! Where the API lives, in order: a `?api=http://127.0.0.1:PORT` query parameter (tests, or a page
//! opened by hand against another server); inside the desktop app, whatever the shell answers to
//! `invoke('api_endpoint')`; otherwise the page's own origin, because `slate serve` serves the page
//! itself and injects the token as `<meta name="slate-token">`.

/** The longest wait between two attempts to reopen the stream. */
const MAX_BACKOFF_MS = 30_000;
/** The first wait after the stream drops; doubled after each failed attempt. */
const FIRST_BACKOFF_MS = 1_000;

/** The Tauri bridge when the page runs inside the desktop app, else null. */
function tauriCore(win) {
  const tauri = win.__TAURI__;
  return tauri && tauri.core && typeof tauri.core.invoke === "function" ? tauri.core : null;
}

function metaToken(doc) {
  const meta = doc.querySelector('meta[name="slate-token"]');
  const content = meta ? meta.getAttribute("content") : "";
  return content || null;
}

/**
 * Finds the API's base URL and token: `{base, token, tauri, servedBy}`.
 * The token may be null (a plain browser page served without one): reading still works, only the
 * refresh button's POST will be refused. `servedBy` is what the desktop shell says serves the API:
 * "app" (its own engine) or "service" (the Slate service it uses instead of an engine of its own);
 * null outside the shell.
 */
export async function resolveEndpoint(win = window) {
  const params = new URLSearchParams(win.location.search);
  const override = params.get("api");
  const core = tauriCore(win);
  if (override) {
    return { base: trimSlash(override), token: params.get("token") || metaToken(win.document), tauri: core, servedBy: null };
  }
  if (core) {
    try {
      const answer = await core.invoke("api_endpoint");
      if (answer && answer.base) {
        return {
          base: trimSlash(String(answer.base)),
          token: answer.token || null,
          tauri: core,
          servedBy: typeof answer.served_by === "string" ? answer.served_by : null,
        };
      }
    } catch {
      // A shell without the command serves the page itself, like `slate serve`: fall through.
    }
  }
  return { base: trimSlash(win.location.origin), token: metaToken(win.document), tauri: core, servedBy: null };
}

function trimSlash(url) {
  return url.replace(/\/+$/, "");
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

  async #getJson(path) {
    const response = await fetch(this.base + path, { headers: { Accept: "application/json" } });
    if (!response.ok) throw await errorOf(response);
    return response.json();
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

  /** `POST /sessions/live/refresh` with the bearer token; resolves once the re-read is published. */
  async refresh() {
    const headers = {};
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    const response = await fetch(this.base + "/sessions/live/refresh", { method: "POST", headers });
    if (!response.ok) throw await errorOf(response);
  }

  /**
   * `POST /sessions/{id}/intent` with the bearer token: park (`{state: "parked", reason}`), await
   * (`{state: "awaiting", reason, awaiting_who}`) or resume (`{state: "none"}`) a session.
   */
  async setIntent(id, intent) {
    const headers = { "Content-Type": "application/json" };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    const response = await fetch(this.base + `/sessions/${encodeURIComponent(id)}/intent`, {
      method: "POST",
      headers,
      body: JSON.stringify(intent),
    });
    if (!response.ok) throw await errorOf(response);
  }

  /**
   * `POST /sessions/{id}/mute` with the bearer token: `{muted: true}` mutes a session (no
   * notification tells of it; it still counts), `{muted: false}` unmutes it.
   */
  async setMuted(id, muted) {
    const headers = { "Content-Type": "application/json" };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    const response = await fetch(this.base + `/sessions/${encodeURIComponent(id)}/mute`, {
      method: "POST",
      headers,
      body: JSON.stringify({ muted }),
    });
    if (!response.ok) throw await errorOf(response);
  }

  /**
   * `POST /sessions/{id}/respond` with the bearer token: answers the dialog the page showed.
   * `answer` is `{action, option?, dialog}` where `dialog` is the fingerprint the page displayed;
   * the page always names itself as the `window` surface. Resolves to the server's
   * `{outcome, action, option?, left_after_ms?}`; a refusal throws an `ApiError` with its code.
   */
  async respond(id, answer) {
    const headers = { "Content-Type": "application/json", Accept: "application/json" };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    const body = { action: answer.action };
    if (answer.option !== undefined && answer.option !== null) body.option = answer.option;
    body.dialog = answer.dialog;
    body.surface = "window";
    const response = await fetch(this.base + `/sessions/${encodeURIComponent(id)}/respond`, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
    });
    if (!response.ok) throw await errorOf(response);
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
   * Opens the live stream and keeps it open: when it drops, it is reopened after a growing pause
   * (1 s, 2 s, 4 s … 30 s), and the first `snapshot` after a reopen replaces the whole list.
   * Handlers: onSnapshot(sessions), onSession(session), onRemoved({agent, id, machine?}), onConnection(state)
   * with state "connecting" | "open" | "retrying". Returns a function that closes the stream.
   */
  subscribe(handlers) {
    let source = null;
    let timer = null;
    let backoff = FIRST_BACKOFF_MS;
    let closed = false;
    const notify = (state, detail) => handlers.onConnection && handlers.onConnection(state, detail);

    const parse = (event) => {
      try {
        return JSON.parse(event.data);
      } catch {
        return null;
      }
    };

    const open = () => {
      if (closed) return;
      notify("connecting");
      source = new EventSource(this.base + "/sessions/live/stream");
      source.addEventListener("snapshot", (event) => {
        const body = parse(event);
        if (!body) return;
        // A snapshot proves the stream works: the next drop starts the pauses from the beginning.
        backoff = FIRST_BACKOFF_MS;
        notify("open");
        handlers.onSnapshot(Array.isArray(body.sessions) ? body.sessions : []);
      });
      source.addEventListener("session", (event) => {
        const session = parse(event);
        if (session && session.id) handlers.onSession(session);
      });
      source.addEventListener("removed", (event) => {
        const key = parse(event);
        if (key && key.id) handlers.onRemoved(key);
      });
      source.onerror = () => {
        // EventSource's own retry gives up on an HTTP error and never backs off, so the page
        // closes it and schedules its own attempt instead.
        source.close();
        source = null;
        if (closed) return;
        const wait = backoff;
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
        notify("retrying", { inMs: wait });
        timer = setTimeout(open, wait);
      };
    };

    open();
    return () => {
      closed = true;
      if (timer) clearTimeout(timer);
      if (source) source.close();
    };
  }
}
