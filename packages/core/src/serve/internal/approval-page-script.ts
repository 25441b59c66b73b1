/**
 * The approval page's script: plain browser JavaScript, inlined into the page (no build step, no framework, nothing
 * fetched at run time; the page's CSP admits exactly this script by its hash). It keeps the token in memory only
 * (read once from the URL fragment, which it then clears, or typed into a password field), sends it as the bearer
 * header, reads `/api/events` through `fetch` (an `EventSource` cannot send a header), and builds every element with
 * `textContent`, never `innerHTML`, with each character `Printable` would escape shown as a marked escape.
 * The Chromium test (`test/approval-page.test.ts`) runs it.
 *
 * @since 0.3.0
 */
import * as Printable from "../../values/printable.js"

/**
 * The script's source; `UNSAFE` is `Printable.UNSAFE`, so the page escapes exactly what every other prompt does.
 *
 * @since 0.3.0
 * @category utilities
 */
export const source = `"use strict";
(() => {
const UNSAFE = new RegExp(${JSON.stringify(Printable.UNSAFE.source)}, "gu");
let token = "";
const asks = new Map();
const $ = (id) => document.getElementById(id);
const el = (tag, attrs, ...children) => {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
};
const escapeOf = (char) => {
  const code = char.codePointAt(0);
  if (char === "\\r") return "\\\\r";
  if (char === "\\t") return "\\\\t";
  if (code <= 0xff) return "\\\\x" + code.toString(16).padStart(2, "0");
  if (code <= 0xffff) return "\\\\u" + code.toString(16).padStart(4, "0");
  return "\\\\u{" + code.toString(16) + "}";
};
const show = (text) => {
  const out = document.createDocumentFragment();
  String(text).split("\\n").forEach((line, index) => {
    if (index > 0) out.append("\\n");
    let last = 0;
    for (const match of line.matchAll(UNSAFE)) {
      out.append(line.slice(last, match.index));
      out.append(el("span", { class: "esc", title: "escaped character" }, escapeOf(match[0])));
      last = match.index + match[0].length;
    }
    out.append(line.slice(last));
  });
  return out;
};
const status = (text) => { $("status").textContent = text; };
const announce = (text) => { $("log").prepend(el("li", {}, show(text))); };
const api = async (method, path, body) => {
  const headers = { authorization: "Bearer " + token };
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (res.status === 401) askToken("The token was refused.");
  const text = await res.text();
  let json; try { json = text === "" ? undefined : JSON.parse(text); } catch { json = undefined; }
  return { ok: res.ok, status: res.status, json };
};
const describeError = (reply) =>
  (reply.json && reply.json._tag ? reply.json._tag : "HTTP " + reply.status) +
  (reply.json && reply.json.message ? ": " + reply.json.message : "");

const diffView = (diff) => {
  const pre = el("pre", { class: "diff", "aria-label": "diff" });
  for (const line of String(diff).split("\\n")) {
    const kind = line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : line.startsWith("@@") ? "hunk" : "ctx";
    pre.append(el("span", { class: kind }, show(line)), "\\n");
  }
  return pre;
};
const savesText = (choice) => {
  if (!choice.saves || choice.saves.length === 0) return "";
  const where = choice.where
    ? choice.where.kind === "project" ? " in project " + choice.where.projectID + " (" + choice.where.directory + ")"
      : " in " + choice.where.directory + " only"
    : "";
  return "saves " + choice.action + ": " + choice.saves.map((s) => s.text).join(", ") + where;
};
const remaining = (deadline) => {
  const left = Math.max(0, Math.round((deadline - Date.now()) / 1000));
  return "expires in " + left + " s";
};

const card = (prompt) => {
  const id = prompt.request.id;
  const error = el("p", { class: "error", role: "alert" });
  const send = async (body, button) => {
    button.disabled = true;
    const reply = await api("POST", "/api/asks/" + encodeURIComponent(id) + "/answer", { digest: prompt.digest, ...body });
    button.disabled = false;
    if (!reply.ok) error.textContent = describeError(reply);
  };
  const choices = prompt.choices.filter((c) => c.lifetime !== "reject");
  const group = el("fieldset", { class: "choices" }, el("legend", {}, "Allow"));
  choices.forEach((choice, index) => {
    const input = el("input", { type: "radio", name: "choice-" + id, value: choice.id, id: id + "-" + choice.id });
    if (index === 0) input.checked = true;
    const saves = savesText(choice);
    group.append(el("label", { for: id + "-" + choice.id, class: "choice" }, input, " ", show(choice.label),
      saves === "" ? "" : el("span", { class: "saves" }, " — ", show(saves))));
  });
  const ttl = el("input", { type: "number", min: "1", step: "1", "aria-label": "minutes an always answer holds (empty: no limit)", placeholder: "no limit" });
  group.append(el("label", { class: "ttl" }, "Minutes an always holds: ", ttl));
  const approve = el("button", { type: "button", class: "approve", onclick: () => {
    const chosen = group.querySelector("input[type=radio]:checked");
    const choice = choices.find((c) => chosen && c.id === chosen.value);
    if (!choice) return;
    const body = { choice: choice.id };
    if (choice.lifetime === "always" && ttl.value !== "") body.ttlMillis = Number(ttl.value) * 60000;
    send(body, approve);
  } }, "Allow");
  const message = el("textarea", { rows: "2", "aria-label": "message to the model with the rejection (optional)", placeholder: "Tell the model why (optional)" });
  const reject = el("button", { type: "button", class: "reject", onclick: () =>
    send(message.value.trim() === "" ? { choice: "reject" } : { choice: "reject", message: message.value }, reject) }, "Reject");
  const resources = el("ul", { class: "resources", "aria-label": "resources" });
  for (const resource of prompt.request.resources) resources.append(el("li", {}, el("code", {}, show(resource))));
  const deadline = el("p", { class: "deadline" });
  if (prompt.deadline !== undefined) deadline.textContent = remaining(prompt.deadline);
  const node = el("article", { class: "ask", id: "ask-" + id, "aria-labelledby": "title-" + id, "data-request": id },
    el("h3", { id: "title-" + id }, show(prompt.request.action + (prompt.tool ? " — " + prompt.tool.name : ""))),
    el("p", { class: "meta" }, "session ", el("code", {}, show(prompt.request.sessionID)), " · request ", el("code", {}, show(id))),
    resources,
    prompt.command !== undefined ? el("pre", { class: "command", "aria-label": "command" }, show(prompt.command)) : "",
    prompt.diff !== undefined ? diffView(prompt.diff) : "",
    prompt.tool ? el("details", {}, el("summary", {}, "Tool input"), el("pre", {}, show(JSON.stringify(prompt.tool.input, null, 2)))) : "",
    deadline, group, el("div", { class: "actions" }, approve), el("div", { class: "reject-row" }, message, reject), error);
  node.tick = () => { if (prompt.deadline !== undefined) deadline.textContent = remaining(prompt.deadline); };
  return node;
};
const renderAsks = () => {
  $("pending-count").textContent = String(asks.size);
  $("empty").hidden = asks.size > 0;
};
const onEvent = (name, data) => {
  if (name === "Asked") {
    if (asks.has(data.prompt.request.id)) return;
    const node = card(data.prompt);
    asks.set(data.prompt.request.id, node);
    $("asks").append(node);
  } else {
    const node = asks.get(data.requestID);
    const hadFocus = node && node.contains(document.activeElement);
    if (node) { node.remove(); asks.delete(data.requestID); }
    announce(name === "Answered"
      ? data.requestID + ": " + data.choice + " (" + data.channel + (data.by ? ", " + data.by : "") + ")"
      : data.requestID + ": expired");
    if (hadFocus) { const next = $("asks").querySelector("button, input"); if (next) next.focus(); }
    if (name === "Answered") loadSaved();
  }
  renderAsks();
};
let stream;
const connect = async () => {
  if (stream) stream.abort();
  const controller = new AbortController();
  stream = controller;
  try {
    const res = await fetch("/api/events", { headers: { authorization: "Bearer " + token }, signal: controller.signal });
    if (res.status === 401) return askToken("The token was refused.");
    if (!res.ok) throw new Error("HTTP " + res.status);
    for (const node of asks.values()) node.remove();
    asks.clear(); renderAsks();
    status("live");
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end;
      while ((end = buffer.indexOf("\\n\\n")) !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let name = "", data = "";
        for (const line of block.split("\\n")) {
          if (line.startsWith("event: ")) name = line.slice(7);
          else if (line.startsWith("data: ")) data += line.slice(6);
        }
        if (name !== "" && data !== "") onEvent(name, JSON.parse(data));
      }
    }
  } catch (error) {
    if (controller.signal.aborted) return;
  }
  if (stream === controller) { status("disconnected, retrying"); setTimeout(connect, 2000); }
};

const loadSaved = async () => {
  const reply = await api("GET", "/api/saved");
  const body = $("saved-rows");
  body.replaceChildren();
  if (!reply.ok) { body.append(el("tr", {}, el("td", { colspan: "5" }, describeError(reply)))); return; }
  for (const row of reply.json) {
    const revoke = el("button", { type: "button", onclick: async () => {
      const result = await api("DELETE", "/api/saved/" + encodeURIComponent(row.id));
      if (!result.ok) announce("revoke " + row.id + ": " + describeError(result));
      loadSaved();
    } }, "Revoke");
    body.append(el("tr", {}, el("td", {}, show(row.action)), el("td", {}, el("code", {}, show(row.resource))),
      el("td", {}, show(row.directory === "" ? "(whole project)" : row.directory)),
      el("td", {}, new Date(row.timeCreated).toISOString()), el("td", {}, revoke)));
  }
  $("saved-empty").hidden = reply.json.length > 0;
};

const loadJournal = async (event) => {
  if (event) event.preventDefault();
  const params = new URLSearchParams();
  const session = $("journal-session").value.trim();
  const since = $("journal-since").value;
  const kind = $("journal-kind").value;
  if (session !== "") params.set("sessionID", session);
  if (since !== "") params.set("since", String(new Date(since).getTime()));
  if (kind !== "") params.set("kind", kind);
  const reply = await api("GET", "/api/journal?" + params.toString());
  const body = $("journal-rows");
  body.replaceChildren();
  if (reply.status === 404) { $("journal-note").textContent = "This server keeps no decision journal."; return; }
  if (!reply.ok) { $("journal-note").textContent = describeError(reply); return; }
  $("journal-note").textContent = reply.json.length + " entries";
  for (const entry of reply.json) {
    const { time, kind: k, sessionID, ...rest } = entry;
    body.append(el("tr", {}, el("td", {}, new Date(time).toISOString()), el("td", {}, show(k)),
      el("td", {}, show(sessionID || "")), el("td", {}, el("code", {}, show(JSON.stringify(rest))))));
  }
};

const start = () => {
  $("token-form").hidden = true;
  $("main").hidden = false;
  connect(); loadSaved(); loadJournal();
};
const askToken = (reason) => {
  if (stream) { stream.abort(); stream = undefined; }
  status(reason);
  $("main").hidden = true;
  $("token-form").hidden = false;
  $("token").focus();
};
$("token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  token = $("token").value.trim();
  $("token").value = "";
  if (token !== "") start();
});
$("journal-form").addEventListener("submit", loadJournal);
$("saved-refresh").addEventListener("click", loadSaved);
setInterval(() => { for (const node of asks.values()) node.tick(); }, 1000);
const fragment = new URLSearchParams(location.hash.slice(1));
token = fragment.get("token") || "";
history.replaceState(null, "", location.pathname + location.search);
if (token === "") askToken("Enter the token toolgate serve printed."); else start();
})();
`
