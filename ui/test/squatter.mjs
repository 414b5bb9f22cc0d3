//! The page test's checks that the token goes only to a server that proved it holds it, run by
//! `run.mjs` in the same browser. The page is opened from a stand-in for this user's Slate; that
//! stops, and a stand-in for another local user's listener (a "squatter") takes its port: one that
//! answers anything and knows no challenge, one that answers with a MAC of another key, and one
//! that passes the challenge on to this user's Slate on another port and relays its MAC. None of
//! them may receive a request that carries the token, whether the page reopens its stream or
//! posts; the page says that the server could not prove itself, and keeps asking, so this user's
//! Slate, back on its port, is proven and read again. And a page that has no WebCrypto sends
//! nothing, and says why.

import http from "node:http";

import { WAIT_MS } from "./browser.mjs";
import { proofOf, startFakeApi, TOKEN } from "./fake-api.mjs";

const LIVE = (rows) => `return document.getElementById('connection').dataset.state === 'open' && document.querySelectorAll('#list .row').length === ${rows};`;
const DOUBT = "const box = document.getElementById('unproven'); return box.hidden ? null : box.textContent;";
const NO_PROOF = "could not prove it is your Slate: nothing was sent";

/**
 * Another user's listener on `port`: keeps every request's method, path and headers, and answers
 * the challenge as `squatter.mode` says: "catcher" (200 and `{}` to everything), "wrong" (a MAC of
 * another key for its own address) or "proxy" (the MAC this user's Slate at `upstream` gives for
 * the same nonce, with its own address put in as `bound`).
 */
function startSquatter(port, upstream) {
  const squatter = { mode: "catcher", received: [] };
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, "http://127.0.0.1");
    squatter.received.push({ mode: squatter.mode, method: req.method, path: url.pathname, headers: req.headers });
    const reply = (body) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify(body));
    };
    const nonce = url.searchParams.get("nonce") || "";
    const bound = `127.0.0.1:${port}`;
    if (url.pathname !== "/auth/challenge" || squatter.mode === "catcher") return reply({});
    if (squatter.mode === "wrong") return reply({ mac: proofOf("f".repeat(64), bound, nonce), bound });
    try {
      const relayed = await (await fetch(`${upstream}/auth/challenge?nonce=${nonce}`)).json();
      return reply({ mac: relayed.mac, bound });
    } catch (error) {
      res.writeHead(502);
      res.end(String(error));
    }
  });
  return new Promise((done, fail) => {
    server.on("error", fail);
    server.listen(port, "127.0.0.1", () => {
      squatter.close = () =>
        new Promise((closed) => {
          server.closeAllConnections();
          server.close(() => closed());
        });
      done(squatter);
    });
  });
}

/** Polls `script` in the page until it returns something truthy, at most `ms`. */
async function until(browser, what, script, ms) {
  const end = Date.now() + ms;
  for (;;) {
    const value = await browser.exec(script);
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(value)})`);
    await new Promise((tick) => setTimeout(tick, 50));
  }
}

/**
 * The checks. `ctx`: `{check, equal, ok, browser, api, entries}`, where `api` is the run's fake
 * API (this user's Slate on another port, for the proxy) and `entries` the sessions to show.
 */
export async function squatterChecks({ check, equal, ok, browser, api, entries }) {
  let own = await startFakeApi();
  own.setWorld(entries);
  const port = own.port;
  const address = `127.0.0.1:${port}`;
  let squatter = null;
  try {
    await check("the page proves the server by a MAC of the token before it sends the token", async () => {
      await browser.go("about:blank");
      await browser.go(`http://${address}/#token=${TOKEN}`);
      await browser.until("the list", LIVE(entries.length));
      ok(own.challenges.length >= 2, `challenges before the stream and the reads: ${own.challenges.length}`);
      equal(own.challenges.filter((challenge) => challenge.authorization), [], "challenges that carried a token");
      ok(own.challenges.every((challenge) => /^[0-9a-f]{64}$/.test(challenge.nonce)), "64 hex digits each");
      equal(new Set(own.challenges.map((challenge) => challenge.nonce)).size, own.challenges.length, "a fresh nonce each time");
      ok(own.requests.length > 0 && own.requests.every((request) => request.authorization === `Bearer ${TOKEN}`), "the reads carried the token");
    });

    await check("another user's listener on the page's port receives no token: it knows no challenge, gives a wrong MAC, or relays another port's", async () => {
      await own.close();
      own = null;
      squatter = await startSquatter(port, `http://127.0.0.1:${api.port}`);
      // The stream drops and is reopened a second later, on the squatter.
      const doubt = await until(browser, "the page's doubt", DOUBT, WAIT_MS);
      ok(doubt.startsWith(`The server at ${address} ${NO_PROOF}`), `the message: ${doubt}`);
      equal(await browser.exec("return document.getElementById('connection').textContent;"), "Not proven", "the connection's label");
      for (const mode of ["catcher", "wrong", "proxy"]) {
        squatter.mode = mode;
        await browser.exec("document.getElementById('message').textContent = '';");
        await browser.click("#refresh");
        const said = await browser.until(`the refresh refused (${mode})`, "const m = document.getElementById('message').textContent; return m.startsWith('Refresh failed') ? m : null;");
        ok(said.includes(`the server at ${address} ${NO_PROOF}`), `${mode}: ${said}`);
        ok(squatter.received.some((request) => request.mode === mode && request.path === "/auth/challenge"), `${mode}: the squatter was asked`);
      }
      ok(api.challenges.length > 0, "the proxy fetched a MAC from this user's Slate on the other port");
      const carried = squatter.received.filter((request) => "authorization" in request.headers || Object.values(request.headers).some((value) => String(value).includes(TOKEN)));
      equal(carried, [], "requests to the squatter that carried the token");
      equal([...new Set(squatter.received.map((request) => request.path))], ["/auth/challenge"], "what the squatter was asked");
      equal(await browser.exec("return window.__errors;"), [], "no page errors");
    });

    await check("this user's Slate back on the port proves itself, and the page reads it again", async () => {
      await squatter.close();
      squatter = null;
      own = await startFakeApi({ port });
      own.setWorld(entries);
      // The stream's pauses grew while the squatter held the port (1 s, 2 s, 4 s …).
      await until(browser, "the list again", LIVE(entries.length), 20_000);
      equal(await browser.exec(DOUBT), null, "the doubt is gone");
      ok(own.challenges.length > 0 && own.requests.length > 0, "proven, then read");
      ok(own.requests.every((request) => request.authorization === `Bearer ${TOKEN}`), "with the token");
    });

    await check("a page with no WebCrypto sends nothing, and says why", async () => {
      const { identifier } = await browser.cdp("Page.addScriptToEvaluateOnNewDocument", {
        source: "Object.defineProperty(Crypto.prototype, 'subtle', { get: () => undefined, configurable: true });",
      });
      try {
        await browser.go("about:blank");
        own.requests = [];
        own.challenges = [];
        await browser.go(`http://${address}/`);
        const doubt = await until(browser, "the page's doubt", DOUBT, WAIT_MS);
        ok(doubt.includes(NO_PROOF) && doubt.includes("no WebCrypto"), `the message: ${doubt}`);
        await new Promise((tick) => setTimeout(tick, 300));
        equal([own.requests, own.challenges], [[], []], "requests and challenges");
      } finally {
        await browser.cdp("Page.removeScriptToEvaluateOnNewDocument", { identifier });
        await browser.go("about:blank");
      }
    });
  } finally {
    if (squatter) await squatter.close();
    if (own) await own.close();
  }
}
