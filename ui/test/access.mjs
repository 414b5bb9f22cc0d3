//! The page test's checks of how the page gets and keeps the token, run by `run.mjs` in the same
//! browser: the token taken from the address's fragment and out of the address bar, kept for a
//! reload, sent with every request, reads and the stream included; a page opened without it
//! saying how to open it, and one opened with a token the server cannot prove sending it nowhere;
//! and the page served by the real `slate serve`, opened from the address it prints, with no token
//! in what it serves.

import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { COUNT, WAIT_MS } from "./browser.mjs";
import { TOKEN } from "./fake-api.mjs";

const NO_TOKEN = "const box = document.getElementById('no-token'); return box.hidden ? null : box.textContent.replace(/\\s+/g, ' ').trim();";
const DOUBT = "const box = document.getElementById('unproven'); return box.hidden ? null : box.textContent;";
const LIVE = (rows) => `return document.getElementById('connection').dataset.state === 'open' && document.querySelectorAll('#list .row').length === ${rows};`;

/**
 * The checks over the fake API. `ctx`: `{check, equal, ok, browser, api, origin, rows}`, where
 * `rows` is how many sessions the page shows when these start; the page was loaded with the
 * token in its address by `run.mjs`'s `load`.
 */
export async function tokenChecks({ check, equal, ok, browser, api, origin, rows }) {
  await check("the token leaves the address bar at load, and every request carried it, reads and the stream included", async () => {
    const where = await browser.exec("return [location.href, location.hash, sessionStorage.getItem('slate-token')];");
    ok(!where[0].includes(TOKEN), `the address: ${where[0]}`);
    equal(where.slice(1), ["", TOKEN], "no fragment left; the token kept for this tab");
    const paths = new Set(api.requests.map((request) => `${request.method} ${request.path.replace(/^\/sessions\/(?!live)[^/]+/, "/sessions/ID")}`));
    for (const path of ["GET /sessions/live", "GET /sessions/live/stream", "GET /health", "GET /sessions/ID", "POST /sessions/live/refresh", "POST /sessions/ID/intent", "POST /sessions/ID/mute"]) {
      ok(paths.has(path), `the run asked ${path}: ${[...paths].join(", ")}`);
    }
    const without = api.requests.filter((request) => request.authorization !== `Bearer ${TOKEN}`);
    equal(without, [], "requests without the token");
  });

  await check("a reload keeps the token it took from the address", async () => {
    api.requests = [];
    await browser.go("about:blank");
    await browser.go(`${origin}/`);
    await browser.until("the list again", LIVE(rows));
    ok(api.requests.length > 0 && api.requests.every((request) => request.authorization === `Bearer ${TOKEN}`), `requests: ${JSON.stringify(api.requests)}`);
  });

  await check("a page opened without the token says how to open it, and asks the API nothing", async () => {
    await browser.exec("sessionStorage.clear();");
    await browser.go("about:blank");
    api.requests = [];
    await browser.go(`${origin}/`);
    const text = await browser.until("the message", NO_TOKEN);
    for (const words of ["opened without one", "slate serve", "#token=", "journalctl --user -u slate", `${origin}/#token=`, "~/.config/slate/token"]) {
      ok(text.includes(words), `the message says ${words}: ${text}`);
    }
    const shown = await browser.exec("return ['list', 'empty', 'loading'].map((id) => document.getElementById(id).hidden).concat(document.getElementById('connection').textContent);");
    equal(shown, [true, true, true, "No access"], "no list, no empty state, no Connecting…");
    await new Promise((tick) => setTimeout(tick, 300));
    equal(api.requests, [], "requests to the API");
  });

  await check("an address with the token pasted into that tab opens the page with it", async () => {
    // Only the fragment differs: the browser does not load the page again by itself.
    await browser.go(`${origin}/#token=${TOKEN}`);
    await browser.until("the list", LIVE(rows));
    ok(!(await browser.exec("return location.href;")).includes(TOKEN), "the token left the address again");
  });

  await check("a server that cannot prove the page's token gets nothing, and the page says so and where the right token is", async () => {
    // Slate's token is not the one this page holds: as for another user's listener, its proof
    // fails, so the page's token is never sent, and the page keeps asking.
    await browser.go("about:blank");
    api.requests = [];
    api.challenges = [];
    await browser.go(`${origin}/#token=${"f".repeat(64)}`);
    const text = await browser.until("the message", DOUBT);
    ok(text.includes("could not prove it is your Slate: nothing was sent"), `the message: ${text}`);
    ok(text.includes("the address Slate prints brings the new one"), `the message names the way out: ${text}`);
    const asked = api.challenges.length;
    await new Promise((tick) => setTimeout(tick, 1500));
    ok(api.challenges.length > asked, `asked again: ${asked}, then ${api.challenges.length}`);
    equal(api.requests, [], "requests that carried a token");
  });
}

/**
 * The page served by the real `slate serve`, over a copy of a recorded HOME, opened from the
 * address it prints on its stderr. `ctx`: `{check, equal, ok, browser, slate, repo}`.
 */
export async function realServeCheck({ check, equal, ok, browser, slate, repo }) {
  await check("the page served by the real slate serve, opened from the address it prints, shows its live list", async () => {
    // A real Claude Code recording (the registry says the turn finished), replayed by the real
    // server over a copy of its HOME, with its recorded process table vouching for it.
    ok(existsSync(slate), `${slate} is built (\`cargo build -p slate\` builds it; scripts/test.sh runs cargo test first)`);
    const recording = join(repo, "fixtures", "recordings", "claude-code", "2.1.332", "finished");
    const home = mkdtempSync(join(tmpdir(), "slate-ui-serve-"));
    cpSync(join(recording, "home"), home, { recursive: true });
    const server = spawn(slate, ["serve", "--listen", "127.0.0.1:0", "--processes", join(recording, "processes.json")], {
      env: {
        HOME: home,
        XDG_CONFIG_HOME: join(home, ".config"),
        XDG_DATA_HOME: join(home, ".local", "share"),
        PATH: process.env.PATH,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      const address = await new Promise((done, fail) => {
        let err = "";
        const timer = setTimeout(() => fail(new Error(`slate serve printed no page address: ${err}`)), WAIT_MS);
        server.stderr.on("data", (chunk) => {
          err += chunk;
          const found = /open the page at (http:\/\/127\.0\.0\.1:\d+)\/#token=([0-9a-f]{64}) /.exec(err);
          if (found) {
            clearTimeout(timer);
            done({ base: found[1], token: found[2] });
          }
        });
        server.on("exit", (code) => fail(new Error(`slate serve exited with ${code}: ${err}`)));
      });
      for (const path of ["/", "/ui/index.html", "/api.js"]) {
        const text = await (await fetch(address.base + path)).text();
        ok(text.length > 0 && !text.includes(address.token), `${path} holds no token`);
      }
      await browser.go(`${address.base}/#token=${address.token}`);
      const rows = await browser.until(
        "the real server's live list",
        `const rows = [...document.querySelectorAll('#list .row')]; return document.getElementById('connection').dataset.state === 'open' && rows.length ? rows.map((row) => row.textContent) : null;`,
      );
      equal(rows.length, 1, "one live session");
      ok(rows[0].includes("The turn finished"), `the row gives the reason: ${rows[0]}`);
      equal(await browser.exec(COUNT), "1 needs you 0 working", "the header count");
      ok(!(await browser.exec("return location.href;")).includes(address.token), "the token left the address");
    } finally {
      server.kill("SIGTERM");
      rmSync(home, { recursive: true, force: true });
    }
  });
}
