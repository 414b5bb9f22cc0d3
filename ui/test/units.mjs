//! The page's modules checked in Node, without a browser: `sse.js`'s reading of an event stream
//! (line ends, comments, fields, chunks cut anywhere, the limit), `api.js`'s taking of the token
//! from the address's fragment, and its live stream over a stand-in `fetch` (the token on the
//! request, a refused token not retried, a silent stream reopened), and its proof of the server
//! before the token goes out (`proveServer`: a MAC of another key or for another address refused,
//! a `localhost` page proven at the address the server names, nothing sent without WebCrypto,
//! a proof before each request; the MACs made with Node's own HMAC). `run.mjs` runs these first,
//! with its own reporter; `node ui/test/units.mjs` runs them alone.

import { Api, proveServer, takeFragmentToken } from "../api.js";
import { EventStreamParser } from "../sse.js";
import { proofOf } from "./fake-api.mjs";

const TOKEN = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
const bytes = (text) => new TextEncoder().encode(text);

function equal(actual, expected, what) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${what}: expected ${e}, got ${a}`);
}

function ok(value, what) {
  if (!value) throw new Error(what);
}

/** The events `chunks` (strings or byte arrays) make, fed one after the other. */
function events(chunks, { end = true, limit } = {}) {
  const seen = [];
  const parser = new EventStreamParser((event) => seen.push([event.type, event.data]), limit);
  for (const chunk of chunks) parser.feed(typeof chunk === "string" ? bytes(chunk) : chunk);
  if (end) parser.end();
  return seen;
}

/** Every way of cutting `text`'s bytes in two, and one byte at a time. */
function cuts(text) {
  const all = bytes(text);
  const ways = [[...all].map((byte) => Uint8Array.of(byte))];
  for (let at = 0; at <= all.length; at += 1) ways.push([all.slice(0, at), all.slice(at)]);
  return ways;
}

/** A window stand-in for the token's taking: its address, history and session storage. */
function fakeWindow(href, stored = null) {
  const url = new URL(href);
  const items = new Map(stored ? [["slate-token", stored]] : []);
  const win = {
    replaced: [],
    location: {
      get hash() {
        return url.hash;
      },
      get pathname() {
        return url.pathname;
      },
      get search() {
        return url.search;
      },
      get href() {
        return url.href;
      },
    },
    history: {
      state: null,
      replaceState(state, title, address) {
        win.replaced.push(address);
        const next = new URL(address, url);
        url.hash = next.hash;
        url.search = next.search;
      },
    },
    sessionStorage: {
      getItem: (key) => (items.has(key) ? items.get(key) : null),
      setItem: (key, value) => items.set(key, String(value)),
    },
    items,
  };
  return win;
}

/** A response whose body the test writes into: `{response, send(text), close()}`. */
function streamed(status = 200, type = "text/event-stream") {
  let controller;
  const body = new ReadableStream({ start: (c) => (controller = c) });
  return {
    response: new Response(body, { status, headers: { "Content-Type": type } }),
    send: (text) => controller.enqueue(bytes(text)),
    close: () => controller.close(),
  };
}

/**
 * A stand-in `fetch` for the API at 127.0.0.1:7411: the challenge answered as the server does
 * (with `token`, by default the page's), every other request recorded and given to `other`.
 */
function proving(other, token = TOKEN) {
  return async (url, init = {}) => {
    const asked = new URL(url);
    if (asked.pathname === "/auth/challenge") {
      const bound = asked.host;
      const mac = proofOf(token, bound, asked.searchParams.get("nonce"));
      return new Response(JSON.stringify({ mac, bound }), { status: 200, headers: { "Content-Type": "application/json" } });
    }
    return other(url, init);
  };
}

/** Waits until `test()` is truthy, at most `ms`. */
async function until(what, test, ms = 5000) {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((tick) => setTimeout(tick, 10));
  }
}

export async function units(check) {
  await check("sse: events by name, data lines joined by LF, comments and unknown fields skipped", async () => {
    const text = ": keep-alive\n\nevent: snapshot\ndata: {\"a\":\ndata: 1}\n\nid: 7\nretry: 10\nfoo: bar\ndata: plain\n\n";
    equal(events([text]), [["snapshot", '{"a":\n1}'], ["message", "plain"]], "events");
  });

  await check("sse: CRLF, CR and LF end lines alike, and a CR cut from its LF is one line end", async () => {
    const want = [["session", "one\ntwo"], ["removed", "x"]];
    for (const text of [
      "event: session\r\ndata: one\r\ndata: two\r\n\r\nevent: removed\r\ndata: x\r\n\r\n",
      "event: session\rdata: one\rdata: two\r\revent: removed\rdata: x\r\r",
      "event: session\ndata: one\r\ndata: two\r\revent: removed\ndata: x\n\r\n",
    ]) {
      for (const chunks of cuts(text)) equal(events(chunks), want, `${JSON.stringify(text)} cut as ${chunks.map((c) => c.length)}`);
    }
  });

  await check("sse: a field's one leading space goes, a line without a colon is an empty field", async () => {
    equal(events(["data:x\n\ndata:  two spaces\n\ndata\n\ndata\ndata\n\n"]), [["message", "x"], ["message", " two spaces"], ["message", ""], ["message", "\n"]], "values");
    equal(events(["event\ndata: a\n\n"]), [["message", "a"]], "an empty event name is a message");
  });

  await check("sse: an event with no data is not sent, and an event's name does not outlive it", async () => {
    equal(events(["event: snapshot\n\ndata: later\n\n"]), [["message", "later"]], "events");
    equal(events(["event: session\ndata: a\n\ndata: b\n\n"]), [["session", "a"], ["message", "b"]], "events");
  });

  await check("sse: an event cut off by the stream's end is dropped", async () => {
    equal(events(["data: whole\n\ndata: half"]), [["message", "whole"]], "no empty line at the end");
    equal(events(["data: whole\n\ndata: half\n"]), [["message", "whole"]], "one line end only");
  });

  await check("sse: UTF-8 cut between chunks, a byte-order mark, and bytes that are not UTF-8", async () => {
    const text = "\uFEFFdata: café → ✓\n\n";
    for (const chunks of cuts(text)) equal(events(chunks), [["message", "café → ✓"]], `cut as ${chunks.map((c) => c.length)}`);
    equal(events([Uint8Array.of(0x64, 0x61, 0x74, 0x61, 0x3a, 0xff, 0x0a, 0x0a)]), [["message", "\uFFFD"]], "a bad byte");
  });

  await check("sse: a line or an event past the limit is an error, not a growing buffer", async () => {
    let thrown = null;
    try {
      events(["data: " + "x".repeat(200)], { end: false, limit: 100 });
    } catch (error) {
      thrown = error;
    }
    ok(thrown && /longer than 100/.test(thrown.message), `a long line: ${thrown}`);
    thrown = null;
    try {
      events([`${"data: 0123456789\n".repeat(20)}\n`], { limit: 100 });
    } catch (error) {
      thrown = error;
    }
    ok(thrown && /longer than 100/.test(thrown.message), `long data: ${thrown}`);
    equal(events([`${"data: 0123456789\n".repeat(5)}\n`], { limit: 100 }).length, 1, "within the limit");
  });

  await check("the token leaves the address's fragment for this tab's storage, the rest stays", async () => {
    const win = fakeWindow(`http://127.0.0.1:7411/?api=x#token=${TOKEN}&view=list`);
    equal(takeFragmentToken(win), TOKEN, "the token found");
    equal(win.replaced, ["/?api=x#view=list"], "the address rewritten once");
    ok(!win.location.href.includes(TOKEN), `the address: ${win.location.href}`);
    equal(win.items.get("slate-token"), TOKEN, "kept for a reload");
    equal(takeFragmentToken(win), null, "taken once");

    const bare = fakeWindow(`http://127.0.0.1:7411/#token=${TOKEN}`);
    takeFragmentToken(bare);
    equal(bare.replaced, ["/"], "no empty fragment left");
    const none = fakeWindow("http://127.0.0.1:7411/#view=list", "kept");
    equal(takeFragmentToken(none), null, "no token in the fragment");
    equal(none.replaced, [], "an address without one is left alone");
    const bad = fakeWindow("http://127.0.0.1:7411/#token=a%20b", "kept");
    equal(takeFragmentToken(bad), null, "a token no header can carry is none");
    equal([bad.replaced, bad.items.get("slate-token")], [["/"], "kept"], "taken out all the same, nothing stored");
  });

  await check("the live stream: the token on the request, events to the handlers, a refused token not retried", async () => {
    const realFetch = globalThis.fetch;
    const asked = [];
    let next = [];
    globalThis.fetch = proving(async (url, init) => {
      asked.push({ url, authorization: new Headers(init.headers).get("Authorization"), signal: init.signal });
      return next.shift().response;
    });
    try {
      const open = streamed();
      const refused = streamed(401, "application/json");
      next = [open];
      const seen = [];
      const api = new Api({ base: "http://127.0.0.1:7411", token: TOKEN, tauri: null });
      const close = api.subscribe({
        onSnapshot: (sessions) => seen.push(["snapshot", sessions.length]),
        onSession: (session) => seen.push(["session", session.id]),
        onRemoved: (key) => seen.push(["removed", key.id]),
        onConnection: (state, detail) => seen.push([state, detail && detail.inMs !== undefined ? detail.inMs : detail ? detail.code : null]),
      });
      open.send('event: snapshot\r\ndata: {"sessions":\r\ndata: [{"id":"a"}]}\r\n\r\n: keep-alive\n\n');
      open.send('event: session\ndata: {"id":"a","status":"waiting"}\n\nevent: removed\ndata: {"agent":"x","id":"a"}\n\n');
      await until("the events", () => seen.length >= 5);
      equal(asked.map((a) => [a.url, a.authorization]), [["http://127.0.0.1:7411/sessions/live/stream", `Bearer ${TOKEN}`]], "the request");
      refused.response = new Response(JSON.stringify({ error: { code: "unauthorized", message: "no" } }), { status: 401 });
      next = [refused];
      open.close();
      await until("the refusal", () => seen.some(([state]) => state === "unauthorized"), 3000);
      equal(seen, [["connecting", null], ["open", null], ["snapshot", 1], ["session", "a"], ["removed", "a"], ["retrying", 1000], ["connecting", null], ["unauthorized", "unauthorized"]], "what the handlers heard");
      await new Promise((tick) => setTimeout(tick, 1200));
      equal(asked.length, 2, "no third attempt after the refusal");
      close();
    } finally {
      globalThis.fetch = realFetch;
    }
  });

  await check("the live stream: a stream silent past its limit is dropped and reopened; closing aborts it", async () => {
    const realFetch = globalThis.fetch;
    const asked = [];
    globalThis.fetch = proving(async (url, init) => {
      asked.push(init.signal);
      const stream = streamed();
      stream.send('event: snapshot\ndata: {"sessions":[]}\n\n');
      return stream.response;
    });
    try {
      const states = [];
      const api = new Api({ base: "http://127.0.0.1:7411", token: TOKEN, tauri: null });
      const close = api.subscribe({ onSnapshot() {}, onSession() {}, onRemoved() {}, onConnection: (state) => states.push(state) }, { silenceMs: 150 });
      await until("the silent stream dropped", () => states.includes("retrying"), 2000);
      ok(asked[0].aborted, "the silent stream's request was aborted");
      await until("the stream reopened", () => asked.length === 2, 3000);
      await until("the second snapshot", () => states.filter((s) => s === "open").length === 2);
      close();
      ok(asked[1].aborted, "closing aborts the open stream");
      const before = states.length;
      await new Promise((tick) => setTimeout(tick, 300));
      equal(states.length, before, "nothing after the close");
    } finally {
      globalThis.fetch = realFetch;
    }
  });
}

export async function proofUnits(check) {
  await check("the proof: a MAC of this token for this address passes, any other is refused and nothing carries the token", async () => {
    const realFetch = globalThis.fetch;
    const asked = [];
    const record = async (url, init = {}) => {
      asked.push([url, new Headers(init.headers).get("Authorization")]);
      return new Response("{}", { status: 200 });
    };
    const refusal = async (base) => {
      try {
        await proveServer(base, TOKEN);
        return null;
      } catch (error) {
        return error.code === "unproven" ? error.message : `not a refusal: ${error}`;
      }
    };
    try {
      globalThis.fetch = proving(record);
      equal(await proveServer("http://127.0.0.1:7411", TOKEN), "http://127.0.0.1:7411", "proven");
      equal(await proveServer("http://[::1]:7411/", TOKEN), "http://[::1]:7411", "proven over IPv6");
      // Another key: a listener that does not hold this token.
      globalThis.fetch = proving(record, "f".repeat(64));
      const wrong = await refusal("http://127.0.0.1:7411");
      ok(wrong && wrong.startsWith("the server at 127.0.0.1:7411 could not prove it is your Slate: nothing was sent"), `a wrong key: ${wrong}`);
      // This token's MAC for another address: a listener relaying this user's Slate on another port.
      globalThis.fetch = async (url) => {
        const nonce = new URL(url).searchParams.get("nonce");
        return new Response(JSON.stringify({ mac: proofOf(TOKEN, "127.0.0.1:7412", nonce), bound: "127.0.0.1:7411" }), { status: 200 });
      };
      ok(await refusal("http://127.0.0.1:7411"), "a relayed MAC is refused");
      // A name: proven at the loopback address the server names, and only one with the same port.
      globalThis.fetch = async (url) => {
        const asked = new URL(url);
        const nonce = asked.searchParams.get("nonce");
        const bound = "127.0.0.1:7411";
        return new Response(JSON.stringify({ mac: proofOf(TOKEN, bound, nonce), bound }), { status: 200 });
      };
      equal(await proveServer("http://localhost:7411", TOKEN), "http://127.0.0.1:7411", "localhost proven at its address");
      ok(await refusal("http://localhost:7412"), "a bound address with another port is refused");
      // No proof at all, or a refusal of the challenge.
      globalThis.fetch = async () => new Response("{}", { status: 200 });
      ok((await refusal("http://127.0.0.1:7411")).includes("no proof"), "an answer with no MAC");
      globalThis.fetch = async () => new Response("", { status: 404 });
      ok((await refusal("http://127.0.0.1:7411")).includes("404"), "a challenge answered 404");
      equal(asked, [], "no other request was sent");
      // No WebCrypto: nothing is asked at all.
      globalThis.fetch = record;
      let error = null;
      try {
        await proveServer("http://127.0.0.1:7411", TOKEN, { win: {} });
      } catch (thrown) {
        error = thrown;
      }
      ok(error && error.code === "unproven" && error.message.includes("no WebCrypto"), `no WebCrypto: ${error}`);
      equal(asked, [], "nothing sent without WebCrypto");
    } finally {
      globalThis.fetch = realFetch;
    }
  });

  await check("one-shot requests: the server is proven before each request with the token, and a failed proof sends nothing", async () => {
    const realFetch = globalThis.fetch;
    const asked = [];
    let key = TOKEN;
    globalThis.fetch = async (url, init = {}) => {
      asked.push([new URL(url).pathname, new Headers(init.headers).get("Authorization")]);
      return proving(async () => new Response(JSON.stringify({ sessions: [] }), { status: 200 }), key)(url, init);
    };
    try {
      const api = new Api({ base: "http://127.0.0.1:7411", token: TOKEN, tauri: null });
      await api.liveSessions();
      await api.refresh();
      equal(asked, [["/auth/challenge", null], ["/sessions/live", `Bearer ${TOKEN}`], ["/auth/challenge", null], ["/sessions/live/refresh", `Bearer ${TOKEN}`]], "a proof before each");
      asked.length = 0;
      key = "e".repeat(64);
      let error = null;
      try {
        await api.setMuted("abc", true);
      } catch (thrown) {
        error = thrown;
      }
      ok(error && error.code === "unproven", `refused: ${error}`);
      equal(asked, [["/auth/challenge", null]], "only the challenge, without the token");
    } finally {
      globalThis.fetch = realFetch;
    }
  });
}

// Run alone: `node ui/test/units.mjs`.
if (import.meta.url === `file://${process.argv[1]}`) {
  let failed = 0;
  const reporter = async (name, body) => {
    try {
      await body();
      console.log(`ok   ${name}`);
    } catch (error) {
      failed += 1;
      console.log(`FAIL ${name}\n     ${error && error.stack ? error.stack : error}`);
    }
  };
  await units(reporter);
  await proofUnits(reporter);
  process.exitCode = failed ? 1 : 0;
}
