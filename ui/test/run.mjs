//! The window page's end-to-end test: headless Chromium, driven over raw W3C WebDriver (`fetch`
//! against chromedriver, no npm packages), loads `ui/` from a small fake API server that this script
//! runs and steers. The fake serves the payloads in `ui/test/fixtures/`, which the real engine
//! produced from the recorded sessions (see `fixtures/make.sh`), shaped as the API contract says;
//! it does not stand in for `slate serve`'s own behaviour, which has its own tests.
//!
//! Run: `node ui/test/run.mjs` (needs Chromium, or `$CHROME_BIN` naming one, `chromedriver`, and the
//! debug `slate` in Cargo's target folder: `cargo build -p slate`).
//! Prints one line per check and a closing `N passed, N failed`; exits non-zero on any failure.
//! With `UPDATE_SCREENSHOTS=1` the screenshots go to `docs/screenshots/` (for the README and the docs) instead
//! of a temporary folder.
//!
//! The fake API and its fixture sessions are `fake-api.mjs`'s; the WebDriver client and the probes
//! run inside the page are `browser.mjs`'s; the checks of the token, and of the page the real
//! server serves, are `access.mjs`'s; those of the server's proof, against another user's
//! listener on the page's port, `squatter.mjs`'s; the page's modules checked in Node alone, run first, are
//! `units.mjs`'s. This script runs the checks.

import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { Browser, COUNT, DETAILS, DETAILS_LOADED, ERRORS, freePort, KEY, ROWS, SELECTED, tauriShell, WAIT_MS } from "./browser.mjs";
import { aged, startFakeApi, TOKEN, variant, world } from "./fake-api.mjs";
import { realServeCheck, tokenChecks } from "./access.mjs";
import { squatterChecks } from "./squatter.mjs";
import { proofUnits, units } from "./units.mjs";
import { costing, usageUnits } from "./usage.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const UI = resolve(HERE, "..");
const REPO = resolve(UI, "..");

/**
 * Cargo's target folder: `<repo>/target`, or `CARGO_TARGET_DIR`, or a Cargo config's
 * `build.target-dir`, as `scripts/target-dir.sh` finds it for every script (it says what is missing
 * when it cannot).
 */
function targetDir() {
  return execFileSync("bash", [join(REPO, "scripts", "target-dir.sh")], { encoding: "utf8" }).trim();
}

// ---------------------------------------------------------------------------------------------
// The checks.

let passed = 0;
let failed = 0;

async function check(name, body) {
  try {
    await body();
    passed += 1;
    console.log(`ok   ${name}`);
  } catch (error) {
    failed += 1;
    console.log(`FAIL ${name}\n     ${String(error && error.stack ? error.stack : error).split("\n").slice(0, 3).join("\n     ")}`);
  }
}

function equal(actual, expected, what) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${what}: expected ${e}, got ${a}`);
}

function ok(value, what) {
  if (!value) throw new Error(what);
}

const keyOf = (entry) => `${entry.session.machine ? `${entry.session.machine}/` : ""}${entry.session.agent}:${entry.session.id}`;

async function main() {
  await units(check);
  await proofUnits(check);
  await usageUnits(check);
  const now = Date.now();
  const w = world(now);
  const api = await startFakeApi();
  const origin = `http://127.0.0.1:${api.port}`;
  const scratch = mkdtempSync(join(tmpdir(), "slate-ui-test-"));
  const shots = process.env.UPDATE_SCREENSHOTS ? join(REPO, "docs", "screenshots") : join(scratch, "screenshots");
  mkdirSync(shots, { recursive: true });

  const driverPort = await freePort();
  // Chromium keeps its crash reports and GLib its dconf cache under HOME, whatever the profile:
  // the driver, and the browser it starts, get a throwaway one.
  const browserHome = join(scratch, "home");
  mkdirSync(browserHome, { recursive: true });
  const driver = spawn("chromedriver", [`--port=${driverPort}`], {
    stdio: ["ignore", "ignore", "inherit"],
    env: {
      ...process.env,
      HOME: browserHome,
      XDG_CONFIG_HOME: join(browserHome, ".config"),
      XDG_CACHE_HOME: join(browserHome, ".cache"),
      XDG_DATA_HOME: join(browserHome, ".local", "share"),
    },
  });
  const driverGone = new Promise((done) => driver.on("exit", done));
  driver.on("error", (error) => {
    console.log(`FAIL cannot start chromedriver: ${error.message}`);
  });
  const wd = `http://127.0.0.1:${driverPort}`;
  let browser = null;
  let shellScript = null;

  try {
    for (let tries = 0; ; tries += 1) {
      try {
        const status = await Browser.call(wd, "GET", "/status");
        if (status.ready) break;
      } catch (error) {
        if (tries > 100) throw new Error(`chromedriver did not start: ${error.message}`);
      }
      await new Promise((tick) => setTimeout(tick, 50));
    }
    browser = await Browser.open(wd, join(scratch, "chromium"));
    await browser.cdp("Emulation.setDeviceMetricsOverride", { width: 480, height: 600, deviceScaleFactor: 2, mobile: false });
    await browser.cdp("Page.addScriptToEvaluateOnNewDocument", { source: ERRORS });

    /**
     * Loads the page over `entries`, in the given theme, and waits for the list (or empty state).
     * A browser page gets the token in the address's fragment, as `slate serve` prints it; the
     * desktop shell's stand-in hands it over itself.
     */
    const load = async (entries, { theme = "light", tauri = null, servedBy = "app", url = tauri ? `${origin}/` : `${origin}/#token=${TOKEN}` } = {}) => {
      api.setWorld(entries);
      // The sessions were aged against the run's start; serving them moved on by the time since
      // keeps "12 s" reading 12 s however long the checks before took.
      api.shiftMs = Date.now() - now;
      await browser.cdp("Emulation.setEmulatedMedia", { features: [{ name: "prefers-color-scheme", value: theme }] });
      if (shellScript) {
        await browser.cdp("Page.removeScriptToEvaluateOnNewDocument", { identifier: shellScript });
        shellScript = null;
      }
      if (tauri) shellScript = (await browser.cdp("Page.addScriptToEvaluateOnNewDocument", { source: tauriShell(tauri, servedBy) })).identifier;
      // From a blank page: an address that differs from the one shown only in its fragment would
      // not load the page again.
      await browser.go("about:blank");
      await browser.go(url);
      await browser.until(
        "the live list",
        `return document.getElementById('connection').dataset.state === 'open' && document.querySelectorAll('#list .row').length === ${entries.length} && (${entries.length} > 0 || !document.getElementById('empty').hidden);`,
      );
    };

    const expectedOrder = [w.permission, w.titleStopped, w.question, w.finished, w.interrupted, w.quiet, w.working].map(keyOf);

    await check("rows come Needs you first, most recent first within a group", async () => {
      await load(w.all);
      const rows = await browser.exec(ROWS);
      equal(rows.map((r) => r.key), expectedOrder, "row order");
      equal(rows.map((r) => r.status), ["Needs you", "Needs you", "Needs you", "Needs you", "Needs you", "Needs you", "Working"], "statuses");
      const groups = await browser.exec("return [...document.querySelectorAll('.group-heading')].map((h) => h.textContent.replace(/\\s+/g, ' ').trim());");
      equal(groups, ["Needs you 6", "Working 1"], "group headings");
    });

    await check("the header counts the sessions that need you", async () => {
      equal(await browser.exec(COUNT), "6 need you 1 working", "summary");
      equal(await browser.exec("return document.title;"), "(6) Slate", "document title");
    });

    await check("a row shows reason, agent, project, branch, title, time and the hosted marker", async () => {
      const rows = await browser.exec(ROWS);
      const first = rows[0];
      equal(first.reason, "Asks permission for Bash: touch slate-permission-probe.txt", "reason");
      equal(first.title, "slate-fixture permission: create a probe file", "title");
      ok(first.meta.includes("acme-api") && first.meta.includes("Claude Code"), `project and agent in ${first.meta}`);
      equal(first.branch, "main ↑2", "branch with ahead");
      // 12 s when served; the page may take a moment to draw it.
      ok(/^1\d s$/.test(first.ago), `relative time in seconds: ${first.ago}`);
      equal(first.hosted, false, "not hosted");
      const finished = rows.find((r) => r.key === keyOf(w.finished));
      equal(finished.branch, "fix/login-timeout ↑1 ↓4 *3", "branch with ahead, behind and dirty");
      equal(finished.ago, "8 min", "minutes");
      const codex = rows.find((r) => r.key === keyOf(w.interrupted));
      ok(codex.hosted, "the hosted session is marked");
      ok(codex.meta.includes("Codex") && codex.meta.includes("web-shop"), `codex meta: ${codex.meta}`);
      equal(rows.find((r) => r.key === keyOf(w.quiet)).ago, "2 h", "hours");
      equal(rows.find((r) => r.key === keyOf(w.working)).reason, "Running Bash: bash scripts/long-task.sh", "working reason");
    });

    await browser.screenshot(join(shots, "window-light.png"));

    await check("the page clock brings the relative times up to date", async () => {
      // The clock runs every 15 s and whenever the window becomes visible again; the check moves
      // the page's time on by a minute and shows the window rather than waiting 15 s.
      await browser.exec("window.__realNow = Date.now; const later = Date.now() + 60000; Date.now = () => later; document.dispatchEvent(new Event('visibilitychange'));");
      const rows = await browser.exec(ROWS);
      await browser.exec("Date.now = window.__realNow; document.dispatchEvent(new Event('visibilitychange'));");
      equal(rows[0].ago, "1 min", "12 s a minute later");
      equal(rows.find((r) => r.key === keyOf(w.finished)).ago, "9 min", "8 min a minute later");
    });

    await check("the first session is selected, and ↓ j ↑ k move the selection", async () => {
      equal(await browser.exec(SELECTED), expectedOrder[0], "initial selection");
      await browser.keys("#list", KEY.down);
      equal(await browser.exec(SELECTED), expectedOrder[1], "after ↓");
      await browser.keys("#list", "j");
      equal(await browser.exec(SELECTED), expectedOrder[2], "after j");
      await browser.keys("#list", "k");
      equal(await browser.exec(SELECTED), expectedOrder[1], "after k");
      await browser.keys("#list", KEY.up + KEY.up + KEY.up);
      equal(await browser.exec(SELECTED), expectedOrder[0], "↑ stops at the top");
      await browser.keys("#list", "jjjjjjjjjj");
      equal(await browser.exec(SELECTED), expectedOrder[6], "j stops at the bottom");
      ok(await browser.exec("return document.getElementById('details').hidden;"), "details stay closed while moving");
    });

    await check("Enter opens the selected session's details: facets, evidence, transitions", async () => {
      await browser.keys("#list", KEY.up.repeat(10));
      await browser.keys("#list", KEY.enter);
      const d = await browser.until("the details with evidence", DETAILS_LOADED);
      equal(d.heading, "slate-fixture permission: create a probe file", "details heading");
      equal(d.facts.Status, "Needs you", "status facet");
      equal(d.facts.Reason, "Asks permission for Bash: touch slate-permission-probe.txt permission_prompt", "reason facet");
      equal(d.facts.Presence, "present", "presence facet");
      equal(d.facts.Activity, "working", "activity facet");
      ok(/\(1\d s ago\)$/.test(d.facts["Active at"] || ""), `active at: ${d.facts["Active at"]}`);
      equal(d.facts.Intent, "none", "intent facet");
      ok(d.facts.Custody.startsWith("holds nothing") && d.facts.Custody.includes("live"), `custody: ${d.facts.Custody}`);
      ok(d.facts["Next actor"].startsWith("operator — a pending decision: Asks permission") && d.facts["Next actor"].includes("since"), `next actor: ${d.facts["Next actor"]}`);
      equal(d.facts.Folder, w.permission.session.folder, "folder");
      equal(d.facts.Transcript, w.permission.session.transcript, "transcript path");
      equal(d.facts.PID, String(w.permission.session.pid), "pid");
      equal(d.evidence, w.permission.details.evidence, "evidence from GET /sessions/{id}");
      equal(d.transitions.length, 2, "two transitions");
      ok(d.transitions[0].startsWith("Working → Needs you Asks permission"), `newest transition first: ${d.transitions[0]}`);
      ok(d.transitions[1].startsWith("first seen → Working"), `first transition: ${d.transitions[1]}`);
      equal(d.needsYou, "Needed you for 12 min in all", "time in Needs you from needs_you_ms");
      equal(d.focusButton, false, "no Focus terminal button in a plain browser");
    });

    await browser.screenshot(join(shots, "details-light.png"));
    await browser.exec("const pane = document.getElementById('details'); pane.scrollTop = pane.scrollHeight;");
    await browser.screenshot(join(shots, "details-evidence-light.png"));

    await check("Esc closes the details", async () => {
      await browser.keys("#list", KEY.escape);
      ok(await browser.exec("return document.getElementById('details').hidden;"), "details hidden after Esc");
    });

    await check("clicking a row opens its details", async () => {
      await browser.click(`#list .row[data-key="${keyOf(w.question)}"]`);
      const d = await browser.until("question details", DETAILS_LOADED);
      equal(d.heading, "slate-fixture question: ask me which database to use", "heading");
      equal(d.facts.Reason, "Asks: Which database should the fixture use? question", "reason facet");
      equal(await browser.exec(SELECTED), keyOf(w.question), "the clicked row is selected");
      await browser.click("#close-details");
    });

    await check("the details pane parks a session with a reason, and asks for one first", async () => {
      api.intents = [];
      await browser.click(`#list .row[data-key="${keyOf(w.question)}"]`);
      await browser.until("question details", DETAILS_LOADED);
      await browser.click("#park");
      await browser.until("the missing reason", "return document.getElementById('message').textContent === 'Give a reason first';");
      equal(api.intents, [], "nothing sent without a reason");
      await browser.keys("#intent-reason", "waiting for review");
      await browser.click("#park");
      const said = await browser.until(
        "the park POST",
        "const text = document.getElementById('message').textContent; return text !== 'Give a reason first' && text;",
      );
      equal(said, "Parked", "what the page said");
      equal(api.intents, [{ id: w.question.session.id, intent: { state: "parked", reason: "waiting for review" } }], "the intent sent");
      await browser.click("#close-details");
    });

    await check("the details pane mutes a session, with the bearer token", async () => {
      api.mutes = [];
      await browser.click(`#list .row[data-key="${keyOf(w.question)}"]`);
      await browser.until("question details", DETAILS_LOADED);
      equal(await browser.exec("return document.getElementById('mute').textContent;"), "Mute", "the button's word");
      await browser.click("#mute");
      const said = await browser.until("the mute POST", "return document.getElementById('message').textContent.startsWith('Muted') && document.getElementById('message').textContent;");
      equal(said, "Muted: no notifications for this session", "what the page said");
      equal(api.mutes, [{ id: w.question.session.id, body: { muted: true } }], "the mute sent");
      await browser.click("#close-details");
    });

    await check("a muted session is marked in the list", async () => {
      const muted = structuredClone(w.question.session);
      muted.muted = true;
      api.push("session", muted);
      await browser.until("the muted mark", `return !!document.querySelector('#list .row[data-key="${keyOf(w.question)}"] .muted');`);
      const unmuted = structuredClone(w.question.session);
      api.push("session", unmuted);
      await browser.until("the mark gone", `return !document.querySelector('#list .row[data-key="${keyOf(w.question)}"] .muted');`);
    });

    await check("a row says its usage and what its cost is, and the header the day's total", async () => {
      const none = await browser.exec(`return document.querySelector('#list .row[data-key="${keyOf(w.question)}"] .usage').textContent;`);
      equal(none, "usage not recorded", "a session with no usage is not $0");
      const priced = structuredClone(w.question.session);
      priced.row_time = new Date().toISOString();
      priced.usage = costing(0.1234, "estimate", 40).usage;
      api.push("session", priced);
      const line = await browser.until("the usage line", `const u = document.querySelector('#list .row[data-key="${keyOf(w.question)}"] .usage'); return u && u.textContent.includes("$") && u.textContent;`);
      equal(line, "1.2k tokens · ≥ $0.12 estimate · context 0.1%", "the row's usage");
      const title = await browser.exec(`return document.querySelector('#list .row[data-key="${keyOf(w.question)}"] .usage').title;`);
      ok(/not a bill/.test(title), `an estimate is not a bill: ${title}`);
      const day = await browser.until("the day's total", `const d = document.getElementById('day-usage'); return !d.hidden && d.textContent.includes("$") && d.textContent;`);
      ok(/^Today \(UTC\): ≥ \$0\.12 estimate · \d+ sessions?$/.test(day), `the day's total: ${day}`);
      api.push("session", structuredClone(w.question.session));
      await browser.until("back to not recorded", `return document.querySelector('#list .row[data-key="${keyOf(w.question)}"] .usage').textContent === "usage not recorded";`);
    });

    await check("r asks the server to re-read, with the bearer token", async () => {
      api.refreshes = [];
      await browser.keys("#list", "r");
      await browser.until("the refresh POST", "return document.getElementById('message').textContent === 'Refreshed';");
      equal(api.refreshes, [`Bearer ${TOKEN}`], "refresh requests");
    });

    await check("a live session event updates its row and the count", async () => {
      const turned = structuredClone(w.working.session);
      turned.status = "waiting";
      turned.session_state.status = "waiting";
      turned.session_state.reason = { code: "turn_finished", text: "The turn finished" };
      turned.row_time = new Date(now - 1000).toISOString();
      api.push("session", turned);
      await browser.until("the count to follow", "return document.getElementById('count').textContent === '7';");
      const rows = await browser.exec(ROWS);
      equal(rows[0].key, keyOf(w.working), "the turned session moves to the top");
      equal(rows[0].status, "Needs you", "its status");
      equal(rows[0].reason, "The turn finished", "its reason");
      equal(await browser.exec(COUNT), "7 need you 0 working", "summary");
    });

    await check("a removed event takes the row out and the count down", async () => {
      api.push("removed", { agent: w.permission.session.agent, id: w.permission.session.id });
      await browser.until("the row to leave", "return document.querySelectorAll('#list .row').length === 6;");
      const rows = await browser.exec(ROWS);
      ok(!rows.some((r) => r.key === keyOf(w.permission)), "the removed session is gone");
      equal(await browser.exec("return document.getElementById('count').textContent;"), "6", "count");
    });

    await check("a closed session the server keeps listed shows under Closed and counts for nothing", async () => {
      // The server keeps a closed session that holds a work claim on its live list; the page
      // shows what the server sent and counts only by status.
      const ended = structuredClone(w.question.session);
      ended.status = "ended";
      ended.session_state.status = "ended";
      ended.session_state.reason = { code: "no_process", text: "Its process ended" };
      ended.session_state.custody = { holds: ["item:docs"], holds_work_claim: true, reclaimable: false, reason: "holds a work claim on item docs" };
      api.push("session", ended);
      await browser.until("the Closed group", "return [...document.querySelectorAll('.group-heading')].some((h) => h.textContent.includes('Closed'));");
      const rows = await browser.exec(ROWS);
      equal(rows.length, 6, "still listed");
      equal(rows[rows.length - 1].key, keyOf(w.question), "the closed row comes last");
      equal(rows[rows.length - 1].status, "Closed", "its status");
      const groups = await browser.exec("return [...document.querySelectorAll('.group-heading')].map((h) => h.textContent.replace(/\\s+/g, ' ').trim());");
      equal(groups, ["Needs you 5", "Closed 1"], "group headings");
      equal(await browser.exec(COUNT), "5 need you 0 working", "summary");
      api.push("removed", { agent: ended.agent, id: ended.id });
      await browser.until("the closed row to leave", "return document.querySelectorAll('#list .row').length === 5;");
      api.push("session", w.question.session);
    });

    await check("a config error the server reports is shown above the list", async () => {
      const error = "the config file /home/dev/.config/slate/config.toml, line 2, in [project-policy], key `sesion_idle_minutes`: unknown field";
      api.health.settings = { file: "/home/dev/.config/slate/config.toml", error, restart_needed: [] };
      await browser.exec("document.dispatchEvent(new Event('visibilitychange'));");
      await browser.until("the banner", "return !document.getElementById('config-error').hidden;");
      const text = await browser.exec("return document.getElementById('config-error').textContent;");
      ok(text.includes("sesion_idle_minutes") && text.includes("config.toml"), `the banner names the key and the file: ${text}`);
      api.health.settings = { file: "/home/dev/.config/slate/config.toml", error: null, restart_needed: [] };
      await browser.exec("document.dispatchEvent(new Event('visibilitychange'));");
      await browser.until("the banner to go", "return document.getElementById('config-error').hidden;");
    });

    await check("a dropped stream reconnects and its snapshot replaces the list", async () => {
      api.dropStreams();
      api.setWorld([w.question, w.working]);
      await browser.until("the reconnect", "return document.querySelectorAll('#list .row').length === 2 && document.getElementById('connection').dataset.state === 'open';");
      const rows = await browser.exec(ROWS);
      equal(rows.map((r) => r.key), [keyOf(w.question), keyOf(w.working)], "rows after the new snapshot");
      equal(await browser.exec(COUNT), "1 needs you 1 working", "summary after the new snapshot");
    });

    await check("a refused stream is retried after growing pauses, showing Offline meanwhile", async () => {
      api.streamAttempts = [];
      api.refuseStreams = 1;
      const dropped = Date.now();
      api.dropStreams();
      await browser.until("the Offline label", "return document.getElementById('connection').textContent === 'Offline';");
      await browser.until("the stream back", "return document.getElementById('connection').dataset.state === 'open';");
      const [refused, accepted] = api.streamAttempts;
      equal(api.streamAttempts.length, 2, "attempts after the drop");
      const gaps = [refused - dropped, accepted - refused];
      ok(gaps[0] >= 900 && gaps[1] >= 1800, `pauses of about 1 s then 2 s: ${JSON.stringify(gaps)}`);
      equal((await browser.exec(ROWS)).length, 2, "the list is kept while offline and replaced by the snapshot");
    });

    await tokenChecks({ check, equal, ok, browser, api, origin, rows: 2 });
    await squatterChecks({ check, equal, ok, browser, api, entries: [w.permission, w.working] });

    await check("a session without session_state shows its status and no facets", async () => {
      await load([w.oldQuestion, w.working]);
      const rows = await browser.exec(ROWS);
      equal(rows[0].key, keyOf(w.oldQuestion), "waiting from the top-level status comes first");
      equal(rows[0].status, "Needs you", "status from the top level");
      equal(rows[0].reason, "", "no reason to show");
      equal(await browser.exec(COUNT), "1 needs you 1 working", "summary");
      await browser.keys("#list", KEY.enter);
      const d = await browser.until("the details", DETAILS);
      equal(d.facts.Status, "Needs you", "status");
      ok(!("Presence" in d.facts) && !("Next actor" in d.facts), "no facets");
      ok(d.notes.some((n) => n.includes("no session_state")), `a note says why: ${JSON.stringify(d.notes)}`);
      equal(await browser.exec("return window.__errors;"), [], "no page errors");
    });

    await check("with no sessions, the empty state explains what Slate watches", async () => {
      await load([]);
      const text = await browser.until("the agent roots", "const e = document.getElementById('empty'); return !e.hidden && e.querySelector('.found') ? e.textContent.replace(/\\s+/g, ' ') : null;");
      for (const words of ["Claude Code", "Codex", "Gemini CLI", "OpenCode", "cursor-agent", "Toy Agent", "slate doctor", "writes to its transcript", "/home/dev/.claude", "/home/dev/.gemini", "/home/dev/.toy"]) {
        ok(text.includes(words), `empty state mentions ${words}: ${text}`);
      }
      const agents = await browser.exec("return [...document.querySelectorAll('#agent-roots li')].map((li) => li.querySelector('.agent-name').textContent);");
      equal(agents, api.health.roots.map((root) => root.product), "every agent the server names, in its order");
      equal(await browser.exec(COUNT), "0 need you", "summary");
      ok(await browser.exec("return document.getElementById('list').hidden;"), "no list");
    });

    await browser.screenshot(join(shots, "empty-light.png"));

    await check("a first session arriving on the stream replaces the empty state", async () => {
      api.push("session", w.question.session);
      await browser.until("the row", "return document.querySelectorAll('#list .row').length === 1 && document.getElementById('empty').hidden;");
    });

    await check("a row names its agent as the server does, or by its id", async () => {
      const toy = variant({ agent: "toy-agent", id: "toy-1", project: "castle" })(w.question.session);
      const unknown = variant({ agent: "quill-cli", id: "quill-1", project: "library" })(w.question.session);
      api.push("session", toy);
      api.push("session", unknown);
      await browser.until("the rows", "return document.querySelectorAll('#list .row').length === 3;");
      const rows = await browser.exec(ROWS);
      const meta = (id) => rows.find((r) => r.key.endsWith(`:${id}`)).meta;
      ok(meta("toy-1").includes("Toy Agent"), `the server's name: ${meta("toy-1")}`);
      ok(meta("quill-1").includes("quill-cli"), `an unnamed agent's id: ${meta("quill-1")}`);
      ok(meta(w.question.session.id).includes("Claude Code"), `a built-in agent: ${meta(w.question.session.id)}`);
    });

    await check("inside the desktop shell the page asks it for the API and can focus a terminal", async () => {
      // The bridge is installed before the page's scripts run, as in the app's webview.
      await load(w.all, { tauri: origin });
      const invoked = await browser.exec("return window.__invoked;");
      equal(invoked[0], ["api_endpoint", null], "asked the shell for the endpoint");
      await browser.keys("#list", KEY.enter);
      await browser.until("the focus button", "return !!document.getElementById('focus');");
      await browser.keys("#list", KEY.enter);
      await browser.until("the focus call", "return window.__invoked.some(([cmd]) => cmd === 'focus_session');");
      const call = (await browser.exec("return window.__invoked;")).find(([cmd]) => cmd === "focus_session");
      equal(call[1], { id: w.permission.session.id }, "focus_session arguments");
      await browser.click("#focus");
      equal((await browser.exec("return window.__invoked;")).filter(([cmd]) => cmd === "focus_session").length, 2, "the button focuses too");
    });

    await check("the window says when the app uses the Slate service, and only then", async () => {
      const servedBy = () => browser.exec("const p = document.getElementById('served-by'); return p.hidden ? null : p.textContent;");
      await load(w.all, { tauri: origin });
      equal(await servedBy(), null, "with the app's own engine");
      await load(w.all, { tauri: origin, servedBy: "service" });
      equal(await servedBy(), "Using the Slate service", "with the service");
      await load(w.all);
      equal(await servedBy(), null, "a page the server serves itself");
    });

    await check("a remote machine's sessions are marked, and an unreachable one's are greyed, uncounted and named", async () => {
      const onBox = aged("permission", 30_000, now, (s) => ({ ...s, machine: "box", id: "b0c5e55e-1111-4222-8333-444444444444", project: "api-server" }));
      const awaySince = new Date(now - 20_000).toISOString();
      const onGpu = aged("question", 60_000, now, (s) => ({ ...s, machine: "gpu", id: "9b0c5e55-1111-4222-8333-444444444444", project: "train", unreachable_since: awaySince }));
      api.health.remotes = [
        { name: "box", destination: "dev@box.example.com", status: "connected", since: new Date(now - 3600_000).toISOString(), sessions: 1 },
        { name: "gpu", destination: "gpu.lab", status: "unreachable", since: awaySince, error: "ssh: connect to host gpu.lab port 22: Connection refused", sessions: 1 },
      ];
      try {
        await load([w.working, onBox, onGpu], { tauri: origin });
        await browser.until("the remotes banner", "return !document.getElementById('remotes').hidden;");
        const rows = await browser.exec(ROWS);
        equal(rows.map((r) => r.key), [keyOf(onBox), keyOf(onGpu), keyOf(w.working)], "row order");
        const machines = await browser.exec("return [...document.querySelectorAll('#list .row')].map((row) => [row.querySelector('.machine') ? row.querySelector('.machine').textContent : null, row.classList.contains('unreachable')]);");
        equal(machines, [["box", false], ["gpu", true], [null, false]], "machine marks and the greyed row");
        equal(await browser.exec(COUNT), "1 needs you 1 working", "the unreachable machine's session is not counted");
        const groups = await browser.exec("return [...document.querySelectorAll('.group-heading')].map((h) => h.textContent.replace(/\\s+/g, ' ').trim());");
        equal(groups, ["Needs you 1", "Working 1"], "group headings count only what can be reached");
        const banner = await browser.exec("return document.getElementById('remotes').textContent;");
        ok(banner.startsWith("gpu is unreachable (since ") && banner.includes("Connection refused"), `the banner names the machine: ${banner}`);
        ok(!banner.includes("box"), `a connected machine is not named: ${banner}`);
        await browser.screenshot(join(shots, "remote-light.png"));

        await browser.click(`#list .row[data-key="${keyOf(onBox)}"]`);
        const d = await browser.until("the remote session's details", DETAILS_LOADED);
        equal(d.facts.Machine, "box", "machine facet");
        ok(api.detailsAsked.includes(`box:${onBox.session.id}`), `details asked as box:ID: ${JSON.stringify(api.detailsAsked)}`);
        ok(!(await browser.exec("return !!document.getElementById('intent-form');")), "no park form for a remote session");
        ok(d.notes.some((n) => n.includes("on box: slate park")), `says where to park it: ${JSON.stringify(d.notes)}`);
        equal(await browser.exec("return document.getElementById('focus').textContent;"), "Attach on box", "the focus button attaches");
        await browser.click("#focus");
        await browser.until("the focus call", "return window.__invoked.some(([cmd]) => cmd === 'focus_session');");
        const call = (await browser.exec("return window.__invoked;")).find(([cmd]) => cmd === "focus_session");
        equal(call[1], { id: `box:${onBox.session.id}` }, "focus_session names the machine");
        await browser.click("#close-details");

        await browser.click(`#list .row[data-key="${keyOf(onGpu)}"]`);
        const away = await browser.until("the unreachable session's details", DETAILS_LOADED);
        ok(away.notes.some((n) => n.startsWith("Slate cannot reach gpu now")), `the details say so: ${JSON.stringify(away.notes)}`);
        await browser.click("#close-details");

        // The machine comes back: its session is counted again, and a removal names its machine.
        const back = structuredClone(onGpu.session);
        delete back.unreachable_since;
        api.health.remotes[1] = { ...api.health.remotes[1], status: "connected", error: undefined };
        api.push("session", back);
        await browser.exec("document.dispatchEvent(new Event('visibilitychange'));");
        await browser.until("the count back", "return document.getElementById('count').textContent === '2' && document.getElementById('remotes').hidden;");
        api.push("removed", { agent: onBox.session.agent, id: onBox.session.id, machine: "box" });
        await browser.until("the remote row to leave", "return document.querySelectorAll('#list .row').length === 2;");
        equal((await browser.exec(ROWS)).map((r) => r.key), [keyOf(onGpu), keyOf(w.working)], "rows after the removal");
      } finally {
        delete api.health.remotes;
      }
    });

    // A session whose pane shows Claude Code's permission dialog, as the contract's session object
    // carries it: every option drawn, the widening ones with no action.
    const permissionDialog = (fingerprint) => ({
      kind: "permission",
      summary: "Run: touch slate-permission-probe.txt",
      options: [
        { number: 1, label: "Yes", action: "approve" },
        { number: 2, label: "Yes, and always allow access to /tmp/slate-rec/claude-permission/acme-api from this project", action: null },
        { number: 3, label: "Yes, and switch to auto mode · auto mode handles these prompts for you", action: null },
        { number: 4, label: "No", action: "deny" },
      ],
      fingerprint,
      answerable: true,
    });
    const atDialog = aged("permission", 9_000, now, (s) => ({ ...s, dialog: permissionDialog("9f86d081884c7d65") }));
    const questionAt = aged("question", 30_000, now, (s) => ({
      ...s,
      dialog: {
        kind: "question",
        summary: "Question: Which database should the fixture use?",
        options: [
          { number: 1, label: "SQLite", action: "answer" },
          { number: 2, label: "Postgres", action: "answer" },
          { number: 3, label: "Type something.", action: "answer" },
          { number: 4, label: "Chat about this", action: "answer" },
        ],
        fingerprint: "0a1b2c3d4e5f6a7b",
        answerable: true,
      },
    }));
    const plainAt = aged(
      "permission",
      50_000,
      now,
      variant({
        agent: "claude-code",
        id: "3c9d7e2a-6b1f-4d8e-a5c0-9f8e7d6c5b4a",
        project: "billing",
        extra: {
          dialog: {
            ...permissionDialog("1122334455667788"),
            answerable: false,
            why_not: "plain terminal: start it in tmux or under `slate run` to answer from here",
          },
        },
      }),
    );
    const DIALOG = (where, key) => `const box = document.querySelector('.dialog-${where}[data-key=${JSON.stringify(key)}]');
if (!box) return null;
return {
  summary: box.querySelector('.dialog-text').textContent,
  kind: box.querySelector('.dialog-kind').textContent,
  fingerprint: box.dataset.fingerprint,
  buttons: [...box.querySelectorAll('button')].map((b) => [b.textContent, b.dataset.action, b.disabled, b.tagName]),
  why: box.querySelector('.why-not') ? box.querySelector('.why-not').textContent : null,
  outcome: box.querySelector('.answer-outcome') ? box.querySelector('.answer-outcome').textContent : null,
};`;

    await check("a session at a dialog shows its summary and a button per offered option, in its row and its details", async () => {
      await load([atDialog, w.working]);
      const row = await browser.until("the row's dialog", DIALOG("row", keyOf(atDialog)));
      equal(row.kind, "Permission", "the dialog's kind");
      equal(row.summary, "Run: touch slate-permission-probe.txt", "the summary");
      equal(row.buttons, [["Yes", "approve", false, "BUTTON"], ["No", "deny", false, "BUTTON"]], "only allow-once and deny, no widening option");
      equal(row.fingerprint, "9f86d081884c7d65", "the fingerprint drawn");
      ok(!(await browser.exec(DIALOG("row", keyOf(w.working)))), "a working session shows no dialog");
      const styles = await browser.exec(
        "const b = (a) => getComputedStyle(document.querySelector(`.dialog-row button[data-action=${a}]`)); return [b('approve').backgroundColor, b('deny').color];",
      );
      equal(styles, ["rgb(29, 107, 53)", "rgb(163, 38, 27)"], "approve and deny styled as such");
      await browser.screenshot(join(shots, "dialog-light.png"));
      await browser.keys("#list", KEY.enter);
      const pane = await browser.until("the details' dialog", DIALOG("details", keyOf(atDialog)));
      equal(pane.summary, row.summary, "the same summary in the details");
      equal(pane.buttons.map((b) => b[0]), ["Yes", "No"], "the same buttons in the details");
      await browser.click("#close-details");
    });

    await check("clicking Approve sends the fingerprint displayed, the action, the surface and the token, and shows the outcome", async () => {
      api.responds = [];
      api.respondReply = { status: 200, body: { outcome: "answered", action: "approve", left_after_ms: 60 }, delayMs: 600 };
      await browser.click(`.dialog-row[data-key="${keyOf(atDialog)}"] button[data-action="approve"]`);
      const busy = await browser.until("the buttons disabled in flight", `const b = [...document.querySelectorAll('.dialog-row button')]; return b.length && b.every((x) => x.disabled) ? b.length : null;`);
      equal(busy, 2, "both buttons wait");
      await browser.until("the outcome", `const o = document.querySelector('.dialog-row .answer-outcome'); return o && o.textContent.startsWith('Allowed once') ? o.textContent : null;`);
      equal(api.responds.length, 1, "one request");
      const [sent] = api.responds;
      equal(sent.id, atDialog.session.id, "the session's id");
      equal(sent.authorization, `Bearer ${TOKEN}`, "the token, as the other POSTs send it");
      ok(sent.contentType.startsWith("application/json"), `a JSON body: ${sent.contentType}`);
      equal(sent.body, { action: "approve", dialog: "9f86d081884c7d65", surface: "window" }, "the request body");
      equal(await browser.exec("return document.getElementById('message').textContent;"), "Allowed once: the dialog left the screen", "the message line");
      ok(await browser.exec("return [...document.querySelectorAll('.dialog-row button')].every((x) => !x.disabled);"), "the buttons are back");

      // The screen changed: the page sends the fingerprint it shows now, never the old one.
      api.responds = [];
      api.respondReply = { status: 200, body: { outcome: "answered", action: "deny" }, delayMs: 0 };
      const changed = structuredClone(atDialog.session);
      changed.dialog = permissionDialog("ffeeddccbbaa9988");
      api.push("session", changed);
      await browser.until("the new drawing", `return document.querySelector('.dialog-row').dataset.fingerprint === 'ffeeddccbbaa9988';`);
      // Enter on the focused button answers too: the buttons are buttons.
      await browser.keys(`.dialog-row button[data-action="deny"]`, KEY.enter);
      await browser.until("the deny", "return document.getElementById('message').textContent.startsWith('Denied');");
      equal(api.responds.map((r) => r.body), [{ action: "deny", dialog: "ffeeddccbbaa9988", surface: "window" }], "the fingerprint drawn now");
    });

    await check("an error reply shows the server's message by the dialog", async () => {
      api.responds = [];
      api.respondReply = { status: 409, body: { error: { code: "dialog_changed", message: "the dialog changed: read it again before answering" } }, delayMs: 0 };
      await browser.click(`.dialog-row[data-key="${keyOf(atDialog)}"] button[data-action="approve"]`);
      const shown = await browser.until("the refusal", `const o = document.querySelector('.dialog-row .answer-outcome.error'); return o ? o.textContent : null;`);
      equal(shown, "Not answered: the dialog changed: read it again before answering", "the refusal by the dialog");
      ok(await browser.exec("return document.getElementById('message').classList.contains('error');"), "the message line says it as an error");
      api.respondReply = { status: 422, body: { error: { code: "cannot_type", message: "cannot type into this terminal: start it in tmux or under `slate run`" } }, delayMs: 0 };
      await browser.click(`.dialog-row[data-key="${keyOf(atDialog)}"] button[data-action="deny"]`);
      await browser.until("the second refusal", `const o = document.querySelector('.dialog-row .answer-outcome.error'); return o && o.textContent.includes('start it in tmux') ? o.textContent : null;`);
      api.respondReply = { status: 409, body: { error: { code: "no_effect", message: "the dialog was still on screen 5 s after the keys" } }, delayMs: 0 };
      await browser.click(`.dialog-row[data-key="${keyOf(atDialog)}"] button[data-action="approve"]`);
      await browser.until("the no-effect refusal", `const o = document.querySelector('.dialog-row .answer-outcome.error'); return o && o.textContent.includes('still on screen') ? o.textContent : null;`);
      equal(api.responds.length, 3, "one request per click, never retried");
      api.respondReply = { status: 200, body: { outcome: "answered", action: "approve", option: 1, left_after_ms: 60 }, delayMs: 0 };
    });

    await check("a question's options are answered by number, and a dialog Slate cannot type into shows why", async () => {
      await load([questionAt, plainAt], { theme: "dark" });
      const question = await browser.until("the question", DIALOG("row", keyOf(questionAt)));
      equal(question.buttons.map((b) => b[0]), ["SQLite", "Postgres", "Type something.", "Chat about this"], "the question's options");
      const plain = await browser.until("the plain terminal's dialog", DIALOG("row", keyOf(plainAt)));
      equal(plain.buttons, [], "no buttons");
      equal(plain.why, "Cannot answer from here: plain terminal: start it in tmux or under `slate run` to answer from here", "why not");
      await browser.screenshot(join(shots, "dialog-dark.png"));
      api.responds = [];
      api.respondReply = { status: 200, body: { outcome: "answered", action: "answer", option: 2 }, delayMs: 0 };
      await browser.click(`.dialog-row[data-key="${keyOf(questionAt)}"] button:nth-child(2)`);
      await browser.until("the answer", "return document.getElementById('message').textContent.startsWith('Answered');");
      equal(api.responds.map((r) => r.body), [{ action: "answer", option: 2, dialog: "0a1b2c3d4e5f6a7b", surface: "window" }], "the option's number");
      equal(await browser.exec("return window.__errors;"), [], "no page errors");
    });

    await check("a dialog on another machine is answered through the server, by its machine-qualified id", async () => {
      const remoteAt = aged(
        "permission",
        20_000,
        now,
        variant({
          agent: "codex",
          id: "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b",
          project: "api-server",
          extra: { machine: "box", dialog: permissionDialog("1a2b3c4d5e6f7a8b") },
        }),
      );
      await load([remoteAt]);
      const row = await browser.until("the remote dialog", DIALOG("row", keyOf(remoteAt)));
      equal(row.buttons.map((b) => [b[0], b[1]]), [["Yes", "approve"], ["No", "deny"]], "allow-once and deny offered");
      api.responds = [];
      api.respondReply = { status: 200, body: { outcome: "answered", action: "deny" }, delayMs: 0 };
      await browser.click(`.dialog-row[data-key="${keyOf(remoteAt)}"] button[data-action=deny]`);
      await browser.until("the answer", "return document.getElementById('message').textContent.startsWith('Denied');");
      equal(api.responds.map((r) => [r.id, r.body]), [["box:5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b", { action: "deny", dialog: "1a2b3c4d5e6f7a8b", surface: "window" }]], "posted for box's session");
      await load([{ ...remoteAt, session: { ...remoteAt.session, dialog: { ...remoteAt.session.dialog, answerable: false, why_not: "box is unreachable since 10:02" } } }]);
      const down = await browser.until("the unreachable remote's dialog", DIALOG("row", keyOf(remoteAt)));
      equal([down.buttons, down.why], [[], "Cannot answer from here: box is unreachable since 10:02"], "no buttons while the link is down");
    });

    await check("?api= points the page at another server", async () => {
      await load([w.finished], { url: `${origin}/?api=${encodeURIComponent(`http://localhost:${api.port}`)}#token=${TOKEN}` });
      equal((await browser.exec(ROWS)).map((r) => r.key), [keyOf(w.finished)], "rows from the other origin");
      api.refreshes = [];
      await browser.click("#refresh");
      await browser.until("the refresh", "return document.getElementById('message').textContent === 'Refreshed';");
      equal(api.refreshes, [`Bearer ${TOKEN}`], "refresh with the token");
    });

    await check("dark theme: the page follows prefers-color-scheme", async () => {
      await load(w.all, { theme: "dark" });
      const bg = await browser.exec("return getComputedStyle(document.body).backgroundColor;");
      equal(bg, "rgb(20, 20, 24)", "dark background");
      await browser.screenshot(join(shots, "window-dark.png"));
      await browser.keys("#list", KEY.enter);
      await browser.until("the details", DETAILS_LOADED);
      await browser.screenshot(join(shots, "details-dark.png"));
      await load([], { theme: "dark" });
      await browser.until("the empty state", "return !document.getElementById('empty').hidden && !!document.querySelector('#empty .found');");
      await browser.screenshot(join(shots, "empty-dark.png"));
    });

    await check("a wide browser window shows the details beside the list", async () => {
      await browser.cdp("Emulation.setDeviceMetricsOverride", { width: 1200, height: 700, deviceScaleFactor: 1, mobile: false });
      await load(w.all);
      await browser.keys("#list", KEY.enter);
      await browser.until("the details", DETAILS);
      const layout = await browser.exec(
        "const l = document.querySelector('.list-pane').getBoundingClientRect(); const d = document.getElementById('details').getBoundingClientRect(); return {listRight: l.right, detailsLeft: d.left, listWidth: l.width};",
      );
      ok(layout.detailsLeft >= layout.listRight - 1 && layout.listWidth > 300, `side by side: ${JSON.stringify(layout)}`);
      await browser.screenshot(join(shots, "wide-light.png"));
    });

    await realServeCheck({ check, equal, ok, browser, slate: join(targetDir(), "debug", "slate"), repo: REPO });

    await check("no page errors in the whole run", async () => {
      equal(await browser.exec("return window.__errors;"), [], "page errors");
    });
  } catch (error) {
    failed += 1;
    console.log(`FAIL the run stopped: ${error && error.stack ? error.stack : error}`);
  } finally {
    if (browser) await browser.quit().catch(() => {});
    driver.kill();
    await driverGone;
    await api.close();
    rmSync(scratch, { recursive: true, force: true });
  }
  if (process.env.UPDATE_SCREENSHOTS) console.log(`screenshots in ${shots}: ${readdirSync(shots).join(", ")}`);
  console.log(`${passed} passed, ${failed} failed`);
  process.exitCode = failed ? 1 : 0;
}

main();
