//! The page test's browser side: a raw W3C WebDriver client for headless Chromium (`fetch`
//! against chromedriver, no npm packages), and the probes `run.mjs` runs inside the page. Used by
//! `run.mjs`.

import { existsSync, writeFileSync } from "node:fs";
import net from "node:net";

import { TOKEN } from "./fake-api.mjs";

export const WAIT_MS = 8000;

const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";
export const KEY = { down: "\uE015", up: "\uE013", enter: "\uE007", escape: "\uE00C" };

/** `$CHROME_BIN`, else where Debian's and Ubuntu's packages put Chromium. */
function chromiumBinary() {
  if (process.env.CHROME_BIN) return process.env.CHROME_BIN;
  const known = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/snap/bin/chromium"];
  return known.find((path) => existsSync(path)) || known[0];
}

export function freePort() {
  return new Promise((done, fail) => {
    const probe = net.createServer();
    probe.on("error", fail);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => done(port));
    });
  });
}

export class Browser {
  constructor(base, id) {
    this.base = base;
    this.id = id;
  }

  static async call(base, method, path, body) {
    const response = await fetch(base + path, {
      method,
      headers: { "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await response.json();
    if (!response.ok || (json.value && json.value.error)) {
      throw new Error(`webdriver ${method} ${path}: ${json.value ? `${json.value.error}: ${json.value.message}` : response.status}`);
    }
    return json.value;
  }

  call(method, path, body) {
    return Browser.call(this.base, method, `/session/${this.id}${path}`, body);
  }

  static async open(base, userDataDir) {
    const value = await Browser.call(base, "POST", "/session", {
      capabilities: {
        alwaysMatch: {
          browserName: "chrome",
          "goog:chromeOptions": {
            binary: chromiumBinary(),
            args: [
              "--headless",
              "--no-sandbox",
              "--disable-gpu",
              "--disable-dev-shm-usage",
              "--no-first-run",
              "--disable-background-networking",
              "--disable-component-update",
              "--disable-sync",
              "--window-size=480,600",
              `--user-data-dir=${userDataDir}`,
            ],
          },
        },
      },
    });
    return new Browser(base, value.sessionId);
  }

  cdp(cmd, params = {}) {
    return this.call("POST", "/goog/cdp/execute", { cmd, params });
  }

  async go(url) {
    await this.call("POST", "/url", { url });
  }

  exec(script, ...args) {
    return this.call("POST", "/execute/sync", { script, args });
  }

  /** Polls `script` until it returns something truthy; fails with `what` after the wait. */
  async until(what, script, ...args) {
    const end = Date.now() + WAIT_MS;
    let last;
    for (;;) {
      last = await this.exec(script, ...args);
      if (last) return last;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
      await new Promise((tick) => setTimeout(tick, 50));
    }
  }

  async find(css) {
    const found = await this.call("POST", "/element", { using: "css selector", value: css });
    return found[ELEMENT];
  }

  /**
   * Finds `css` and acts on it. The page redraws its rows as the live list changes, so an element
   * found a moment ago may be gone by the time the action reaches it; WebDriver then answers
   * "stale element reference" and the action did not happen, so the element is found again (at
   * most three times). Any other error is the test's to report.
   */
  async onElement(css, action) {
    for (let attempt = 1; ; attempt++) {
      const id = await this.find(css);
      try {
        return await action(id);
      } catch (error) {
        if (attempt >= 3 || !String(error.message).includes("stale element reference")) throw error;
      }
    }
  }

  async click(css) {
    await this.onElement(css, (id) => this.call("POST", `/element/${id}/click`, {}));
  }

  async keys(css, text) {
    await this.onElement(css, (id) => this.call("POST", `/element/${id}/value`, { text }));
  }

  async screenshot(file) {
    const png = Buffer.from(await this.call("GET", "/screenshot"), "base64");
    writeFileSync(file, png);
    return png;
  }

  async quit() {
    await this.call("DELETE", "");
  }
}

// ---------------------------------------------------------------------------------------------
// Page probes, run inside the page.

export const ROWS = `return [...document.querySelectorAll('#list .row')].map((row) => ({
  key: row.dataset.key,
  status: row.querySelector('.pill').textContent,
  reason: row.querySelector('.reason').textContent,
  title: row.querySelector('.row-title').textContent,
  meta: row.querySelector('.row-meta').textContent,
  branch: row.querySelector('.branch') ? row.querySelector('.branch').textContent : null,
  hosted: !!row.querySelector('.hosted'),
  ago: row.querySelector('.ago') ? row.querySelector('.ago').textContent : null,
  selected: row.getAttribute('aria-selected') === 'true',
}));`;
export const COUNT = "return document.getElementById('summary').textContent.replace(/\\s+/g, ' ').trim();";
export const SELECTED = "const row = document.querySelector('#list .row[aria-selected=\"true\"]'); return row ? row.dataset.key : null;";
export const DETAILS = `const pane = document.getElementById('details');
if (pane.hidden) return null;
const facts = {};
for (const dt of pane.querySelectorAll('dt')) facts[dt.textContent] = dt.nextElementSibling.textContent;
return {
  heading: pane.querySelector('h2').textContent,
  facts,
  evidence: [...pane.querySelectorAll('#evidence-list li')].map((li) => li.textContent),
  transitions: [...pane.querySelectorAll('.transitions li')].map((li) => li.textContent.replace(/\\s+/g, ' ').trim()),
  notes: [...pane.querySelectorAll('.note')].map((p) => p.textContent),
  needsYou: pane.querySelector('.needs-you-total') ? pane.querySelector('.needs-you-total').textContent : null,
  focusButton: !!pane.querySelector('#focus'),
  text: pane.textContent,
};`;
export const DETAILS_LOADED = `${DETAILS.replace("return {", "const out = {")}; return out.evidence.length ? out : null;`;
// Installed before any page script: collects uncaught errors, and (when asked) a stand-in for the
// desktop shell's bridge that answers `api_endpoint` and records `focus_session`.
export const ERRORS = `window.__errors = [];
addEventListener('error', (e) => window.__errors.push(String(e.message)));
addEventListener('unhandledrejection', (e) => window.__errors.push(String(e.reason && e.reason.message || e.reason)));`;
export const tauriShell = (base, servedBy = "app") => `window.__invoked = [];
window.__TAURI__ = { core: { invoke: async (cmd, args) => {
  window.__invoked.push([cmd, args || null]);
  if (cmd === 'api_endpoint') return { base: ${JSON.stringify(base)}, token: ${JSON.stringify(TOKEN)}, served_by: ${JSON.stringify(servedBy)} };
  if (cmd === 'focus_session') return null;
  throw new Error('unknown command ' + cmd);
} } };`;
