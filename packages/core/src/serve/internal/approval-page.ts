/**
 * The approval web page: one self-contained HTML document (inline CSS and script, no external resource, no
 * framework), served at `/` with a Content-Security-Policy that admits only its own style and script (by hash),
 * connections to its own origin only, and no framing. Plain HTML, CSS and a small script were chosen over a framework
 * because the page is three lists and two forms: nothing to build, nothing to ship beside the library, and nothing a
 * reviewer has to trust beyond these two files. Every control is a native button, input or textarea in document
 * order, so the page is usable with the keyboard alone (Tab, Space, Enter) and by screen readers (landmarks, labels,
 * a live region for answered and expired asks).
 *
 * @since 0.3.0
 */
import * as crypto from "node:crypto"
import * as Script from "./approval-page-script.js"

const style = `
:root { color-scheme: light dark; --fg: #1b1b1f; --bg: #fafafa; --muted: #5c5c66; --line: #d0d0d8; --add: #e3f6e8;
  --del: #fbe6e6; --hunk: #e8eefc; --esc: #ffe08a; --accent: #0b57d0; --danger: #b3261e; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e6ea; --bg: #16161a; --muted: #a0a0ab; --line: #3a3a44;
  --add: #16351f; --del: #3d1a1a; --hunk: #1c2641; --esc: #6b5200; --accent: #8ab4f8; --danger: #f2b8b5; } }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
header, main, form#token-form { max-width: 70rem; margin: 0 auto; padding: 0.75rem 1rem; }
header { display: flex; gap: 1rem; align-items: baseline; border-bottom: 1px solid var(--line); }
header h1 { font-size: 1.2rem; margin: 0; }
#status { color: var(--muted); }
h2 { font-size: 1.05rem; margin: 1.5rem 0 0.5rem; }
.ask { border: 1px solid var(--line); border-radius: 6px; padding: 0.75rem 1rem; margin: 0 0 1rem; }
.ask h3 { margin: 0 0 0.25rem; font-size: 1rem; }
.meta, .deadline, .saves, #journal-note, #empty, #saved-empty { color: var(--muted); }
pre { overflow-x: auto; padding: 0.5rem; border: 1px solid var(--line); border-radius: 4px; margin: 0.5rem 0;
  white-space: pre; font: 13px/1.4 ui-monospace, monospace; }
.diff .add { background: var(--add); } .diff .del { background: var(--del); } .diff .hunk { background: var(--hunk); }
.esc { background: var(--esc); border-radius: 2px; padding: 0 1px; font-family: ui-monospace, monospace; }
fieldset { border: 1px solid var(--line); border-radius: 4px; margin: 0.5rem 0; }
.choice, .ttl { display: block; margin: 0.2rem 0; }
.actions, .reject-row { display: flex; gap: 0.5rem; align-items: flex-start; margin-top: 0.5rem; }
textarea { flex: 1; font: inherit; }
button { font: inherit; padding: 0.3rem 0.9rem; border-radius: 4px; border: 1px solid var(--line); cursor: pointer; }
button.approve { border-color: var(--accent); } button.reject { border-color: var(--danger); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.error { color: var(--danger); margin: 0.25rem 0 0; }
table { border-collapse: collapse; width: 100%; } td, th { text-align: left; padding: 0.25rem 0.5rem;
  border-bottom: 1px solid var(--line); vertical-align: top; } td code { word-break: break-all; }
#log { color: var(--muted); font-size: 0.9rem; }
form.filters { display: flex; gap: 0.75rem; flex-wrap: wrap; align-items: end; }
form.filters label { display: flex; flex-direction: column; font-size: 0.9rem; }
`

const body = `
<header><h1>toolgate approvals</h1><span id="status" role="status">starting</span></header>
<form id="token-form" hidden>
  <label for="token">Token (printed by <code>toolgate serve</code>)</label>
  <input id="token" type="password" autocomplete="off" required>
  <button type="submit">Connect</button>
</form>
<main id="main" hidden>
  <section aria-labelledby="pending-title">
    <h2 id="pending-title">Pending asks (<span id="pending-count">0</span>)</h2>
    <p id="empty">Nothing is waiting for an answer.</p>
    <div id="asks"></div>
    <ul id="log" aria-live="polite" aria-label="answered and expired asks"></ul>
  </section>
  <section aria-labelledby="saved-title">
    <h2 id="saved-title">Saved approvals</h2>
    <button type="button" id="saved-refresh">Refresh</button>
    <p id="saved-empty" hidden>No saved approvals for this project.</p>
    <table><thead><tr><th>action</th><th>resource</th><th>directory</th><th>saved</th><th></th></tr></thead>
    <tbody id="saved-rows"></tbody></table>
  </section>
  <section aria-labelledby="journal-title">
    <h2 id="journal-title">Decision journal</h2>
    <form id="journal-form" class="filters">
      <label>Session <input id="journal-session" type="text"></label>
      <label>Since <input id="journal-since" type="datetime-local"></label>
      <label>Kind <select id="journal-kind"><option value="">all</option><option>evaluated</option>
        <option>asked</option><option>answered</option><option>expired</option><option>auto-resolved</option>
        <option>cascaded</option><option>revoked</option></select></label>
      <button type="submit">Filter</button>
    </form>
    <p id="journal-note"></p>
    <table><thead><tr><th>time</th><th>kind</th><th>session</th><th>details</th></tr></thead>
    <tbody id="journal-rows"></tbody></table>
  </section>
</main>
`

const hash = (text: string): string => `'sha256-${crypto.createHash("sha256").update(text).digest("base64")}'`

/**
 * The page.
 *
 * @since 0.3.0
 * @category utilities
 */
export const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>toolgate approvals</title><style>${style}</style></head>
<body>${body}<script>${Script.source}</script></body></html>
`

/**
 * The page's Content-Security-Policy: its own inline style and script by hash, `fetch` to its own origin only.
 *
 * @since 0.3.0
 * @category utilities
 */
export const contentSecurityPolicy = [
  "default-src 'none'",
  `script-src ${hash(Script.source)}`,
  `style-src ${hash(style)}`,
  "connect-src 'self'",
  "img-src 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join("; ")
