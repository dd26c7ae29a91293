// laminate demo page: plays every provider's tool loop, one turn per stream.
//
// Each turn is a Vercel AI SDK UI message stream (SSE "data:" chunks) written by laminate's
// "ai-sdk" encoder, plus laminate's own per-field marks as "data-laminate-args" parts: the
// characters each string argument gained (string_deltas) and the values now finished
// (is_written). The page never parses the raw argument JSON itself.
"use strict";

const log = document.getElementById("log");
const statusLine = document.getElementById("status");
const nav = document.getElementById("providers");

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// ["files", 0, "name"] -> "files[0].name", as the terminal demo labels them.
function pathLabel(path) {
  let label = "";
  for (const part of path) {
    if (typeof part === "number") label += `[${part}]`;
    else label += label ? `.${part}` : part;
  }
  return label || "(value)";
}

// Keep the newest output in view, unless the reader has scrolled up.
function nearBottom() {
  return window.innerHeight + window.scrollY >= document.body.scrollHeight - 120;
}

// SSE frames from a fetch body: yields each chunk's parsed JSON, stops at [DONE].
async function* uiChunks(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replace(/\r\n?/g, "\n");
    const frames = buffer.split("\n\n");
    buffer = frames.pop();
    const batch = [];
    for (const frame of frames) {
      const data = frame
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(line.startsWith("data: ") ? 6 : 5))
        .join("\n");
      if (data === "[DONE]") {
        if (batch.length) yield batch;
        return;
      }
      if (data) batch.push(JSON.parse(data));
    }
    if (batch.length) yield batch;
  }
}

// One tool call's card: a row per argument, growing as its characters arrive.
class ToolCard {
  constructor(parent, id, name) {
    this.node = el("article", "tool streaming");
    this.node.dataset.callId = id;
    this.node.dataset.name = name;
    const head = el("header");
    head.append(el("span", "name", name), el("span", "id", id));
    this.state = el("span", "state", "streaming");
    this.raw = el("span", "raw", "");
    head.append(this.raw, this.state);
    this.fields = el("div", "fields");
    this.node.append(head, this.fields);
    this.rows = new Map();
    this.rawLength = 0;
    parent.append(this.node);
  }

  row(path) {
    const label = pathLabel(path);
    let row = this.rows.get(label);
    if (!row) {
      const node = el("div", "field open");
      node.dataset.path = label;
      const name = el("div", "key");
      name.append(el("span", "mark"), el("span", "label", label));
      const value = el("pre", "value");
      value.append(document.createTextNode(""));
      node.append(name, value);
      this.fields.append(node);
      row = { node, text: value.firstChild };
      this.rows.set(label, row);
    }
    return row;
  }

  rawText(delta) {
    this.rawLength += delta.length;
    this.raw.textContent = `${this.rawLength} chars of JSON`;
  }

  marks(data) {
    for (const [path, text] of data.strings) this.row(path).text.appendData(text);
    for (const path of data.complete) this.row(path).node.classList.replace("open", "done");
  }

  setState(state, text) {
    this.node.classList.remove("streaming", "ready", "cut", "ran", "failed");
    this.node.classList.add(state);
    this.state.textContent = text;
  }

  // The whole input is known: show the values that never streamed as strings
  // (numbers, booleans, null, empty containers), finished by definition.
  available(input) {
    this.setState("ready", "arguments complete");
    const leaves = [];
    const walk = (value, path) => {
      if (value !== null && typeof value === "object") {
        const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
        if (entries.length === 0 && path.length) leaves.push([path, value]);
        for (const [key, item] of entries) walk(item, [...path, key]);
      } else if (typeof value !== "string" || !this.rows.has(pathLabel(path))) {
        leaves.push([path, value]);
      }
    };
    walk(input, []);
    if (leaves.length === 0 && this.rows.size === 0) this.fields.append(el("p", "empty", "no arguments"));
    for (const [path, value] of leaves) {
      const row = this.row(path);
      row.text.appendData(typeof value === "string" ? value : JSON.stringify(value));
      row.node.classList.replace("open", "done");
    }
  }

  // Never shown as finished: the fields that did not finish keep saying so.
  cut(reason) {
    this.setState("cut", "cut off");
    this.node.append(el("div", "result error", `✗ ${reason}`));
  }

  output(text, ok) {
    this.setState(ok ? "ran" : "failed", ok ? "ran" : "failed");
    const result = el("div", ok ? "result" : "result error");
    result.append(el("span", "arrow", "↳ "), el("span", "output", text));
    this.node.append(result);
  }
}

// One turn: a heading, then text, reasoning and tool cards in stream order.
class TurnView {
  constructor(section) {
    this.node = el("div", "turn streaming");
    this.heading = el("h3", "", "waiting for the provider…");
    this.body = el("div", "blocks");
    this.foot = el("footer");
    this.node.append(this.heading, this.body, this.foot);
    section.append(this.node);
    this.texts = new Map();
    this.cards = new Map();
    this.next = null;
    this.events = 0;
    this.finished = false;
  }

  textBlock(id, className) {
    let node = this.texts.get(id);
    if (!node) {
      node = el("div", `${className} open`);
      if (className === "reasoning") node.append(el("span", "label", "thinking"));
      node.append(el("span", "content"));
      node.lastChild.append(document.createTextNode(""));
      this.body.append(node);
      this.texts.set(id, node);
    }
    return node;
  }

  handle(part) {
    switch (part.type) {
      case "data-laminate-turn": {
        const d = part.data;
        this.heading.textContent = `turn ${d.turn} · POST ${d.endpoint} · ${d.model || "?"}`;
        break;
      }
      case "text-start":
      case "reasoning-start":
        this.textBlock(part.id, part.type.split("-")[0]);
        break;
      case "text-delta":
      case "reasoning-delta": {
        const node = this.textBlock(part.id, part.type.split("-")[0]);
        node.querySelector(".content").firstChild.appendData(part.delta);
        break;
      }
      case "text-end":
      case "reasoning-end":
        this.texts.get(part.id)?.classList.replace("open", "done");
        break;
      case "tool-input-start":
        this.cards.set(part.toolCallId, new ToolCard(this.body, part.toolCallId, part.toolName));
        break;
      case "tool-input-delta":
        this.cards.get(part.toolCallId)?.rawText(part.inputTextDelta);
        break;
      case "data-laminate-args":
        this.cards.get(part.data.toolCallId)?.marks(part.data);
        break;
      case "tool-input-available":
        this.cards.get(part.toolCallId)?.available(part.input);
        break;
      case "tool-input-error":
        this.cards.get(part.toolCallId)?.cut(part.errorText);
        break;
      case "tool-output-available":
        this.cards.get(part.toolCallId)?.output(String(part.output), true);
        break;
      case "tool-output-error":
        this.cards.get(part.toolCallId)?.output(part.errorText, false);
        break;
      case "data-laminate-summary":
        this.summary(part.data);
        break;
      case "finish":
        this.finished = true;
        this.foot.prepend(el("span", "finish", `finish: ${part.finishReason}`));
        break;
      case "error":
        this.fail(part.errorText);
        break;
      default: // start, start-step, finish-step and parts this page does not draw
        break;
    }
  }

  summary(data) {
    this.events = data.events;
    this.next = data.continue || null;
    const stop = data.sentAs === data.stopReason ? data.stopReason : `${data.stopReason} (sent as "${data.sentAs}")`;
    const u = data.usage;
    const tokens = u.input_tokens === null && u.output_tokens === null
      ? "usage not reported"
      : `${u.input_tokens ?? "?"} in, ${u.output_tokens ?? "?"} out tokens`;
    this.foot.append(el("span", "", `stop: ${stop}`), el("span", "", tokens), el("span", "", `${data.events} events`));
  }

  // The stream broke off: whatever was still streaming stays unfinished, marked as cut.
  fail(text) {
    const error = el("div", "error", text);
    this.body.append(error);
    for (const card of this.cards.values()) {
      if (card.node.classList.contains("streaming")) card.cut("the stream ended first");
    }
    for (const node of this.texts.values()) node.classList.replace("open", "cut");
  }

  end() {
    if (!this.finished && !this.node.querySelector(".error")) this.fail("the stream ended without finishing");
    this.node.classList.replace("streaming", this.finished ? "done" : "failed");
  }
}

async function playTurn(section, request) {
  const view = new TurnView(section);
  const response = await fetch("/api/turn", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(request),
  });
  if (!response.ok) {
    view.fail(`the server answered ${response.status}: ${await response.text()}`);
  } else {
    for await (const batch of uiChunks(response)) {
      const stick = nearBottom();
      for (const part of batch) view.handle(part);
      if (stick) window.scrollTo(0, document.body.scrollHeight);
    }
  }
  view.end();
  return view;
}

// Held open while the page is shown: when the last page closes, the demo stops.
async function holdPresence() {
  try {
    const response = await fetch("/api/presence");
    const reader = response.body.getReader();
    while (!(await reader.read()).done);
  } catch (error) {
    // the server went away: said below
  }
  if (document.body.dataset.state !== "done") return;
  statusLine.textContent += " The demo server has stopped.";
}

async function main() {
  const plan = await (await fetch("/api/demo")).json();
  document.getElementById("prompt").textContent = plan.prompt;
  holdPresence();
  const chips = new Map();
  for (const provider of plan.providers) {
    const chip = el("span", "chip", provider);
    chips.set(provider, chip);
    nav.append(chip);
  }
  document.body.dataset.state = "streaming";
  let events = 0;
  let failed = 0;
  for (const provider of plan.providers) {
    chips.get(provider).classList.add("live");
    statusLine.textContent = `streaming ${provider}…`;
    const section = el("section", "provider");
    section.dataset.provider = provider;
    section.append(el("h2", "", provider));
    log.append(section);
    let request = { provider };
    let ok = true;
    while (request) {
      const view = await playTurn(section, request);
      events += view.events;
      ok = ok && view.finished;
      failed += view.finished ? 0 : 1;
      request = view.next ? { continue: view.next } : null;
    }
    chips.get(provider).classList.replace("live", ok ? "done" : "failed");
  }
  const n = plan.providers.length;
  statusLine.textContent = `${n} provider${n === 1 ? "" : "s"}, ${events} events: one event stream.`
    + (failed ? ` ${failed} turn${failed === 1 ? "" : "s"} ended early.` : "");
  document.body.dataset.state = "done";
}

main().catch((error) => {
  document.body.dataset.state = "failed";
  statusLine.textContent = `the demo failed: ${error}`;
});
