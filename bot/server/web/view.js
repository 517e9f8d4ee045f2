// Rendering of the session's data-channel events: captions, tool calls, tables, the approval
// waiting for the user, the context meter with its compaction log, and per-turn latency. No
// network code lives here.

const $ = (id) => document.getElementById(id);

const COMPONENT_COLORS = [
  "#5b8def", "#f0a030", "#3fb68b", "#d9534f", "#9b6dd6",
  "#2bb5c8", "#c9b03a", "#e36fa8", "#7f8c8d", "#8fbf4d",
];
const colorFor = (() => {
  const assigned = new Map();
  return (name) => {
    if (!assigned.has(name)) assigned.set(name, COMPONENT_COLORS[assigned.size % COMPONENT_COLORS.length]);
    return assigned.get(name);
  };
})();

// How long "Reconnected" stays on screen.
const NOTE_SHOWN_MS = 5000;

// The parts of a turn's wait, in the order they happen (bot/voice/timing.py PARTS).
const WAIT_PARTS = ["endpoint", "stt", "state", "llm_first_token", "first_clause", "tts_first_chunk"];

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

function scrollLog() {
  const log = $("log");
  log.scrollTop = log.scrollHeight;
}

// How many meter updates the growth curve shows (the newest).
const GROWTH_POINTS = 200;

export class View {
  constructor() {
    this.turns = new Map(); // turn_id -> {li, text}
    this.latency = new Map(); // turn_id -> {row, stages}
    this.meterUpdates = 0;
    // The growth curve: context used at each meter update (a share of the window), and the
    // update after which each compaction tier ran. The newest GROWTH_POINTS are drawn.
    this.growth = [];
    this.runs = [];
  }

  userSaid(text, { typed = false, endedBy = "" } = {}) {
    $("partial").textContent = "";
    const li = el("li", "msg user");
    // Which rule ended a spoken turn: the end-of-turn detector, the silence window or its limit.
    const who = typed ? "you (typed)" : endedBy ? `you · ended by ${endedBy}` : "you";
    li.append(el("span", "who", who), el("span", "text", text));
    if (endedBy) li.dataset.endedBy = endedBy;
    $("log").append(li);
    scrollLog();
  }

  partial(text) {
    $("partial").textContent = text ? `… ${text}` : "";
  }

  turn(turnId) {
    let entry = this.turns.get(turnId);
    if (!entry) {
      const li = el("li", "msg annie");
      li.dataset.turn = turnId;
      const body = el("span", "text", "");
      li.append(el("span", "who", "Annie"), body);
      $("log").append(li);
      entry = { li, body, text: "" };
      this.turns.set(turnId, entry);
    }
    return entry;
  }

  delta(turnId, text) {
    const entry = this.turn(turnId);
    entry.text += text;
    entry.body.textContent = entry.text;
    scrollLog();
  }

  stateAnswer(ev) {
    const entry = this.turn(ev.turn_id);
    entry.li.classList.add("state");
    entry.text = ev.text;
    entry.body.textContent = ev.text;
    const badge = el("span", "badge", `state path · ${ev.intent} · ${ev.latency_ms.toFixed(1)} ms`);
    badge.title = `sources: ${ev.sources.join(", ")}`;
    entry.li.append(badge);
    scrollLog();
  }

  done(ev) {
    const entry = this.turn(ev.turn_id);
    if (ev.text && ev.text !== entry.text && !ev.interrupted) {
      entry.text = ev.text;
      entry.body.textContent = ev.text;
    }
    entry.li.dataset.path = ev.path;
    if (ev.interrupted) {
      entry.li.classList.add("interrupted");
      entry.li.append(el("span", "badge warn", "interrupted"));
    }
  }

  toolCall(ev) {
    const li = el("li", "msg tool");
    li.dataset.call = ev.call_id;
    li.append(el("span", "who", "tool"), el("code", "text", `${ev.name}(${JSON.stringify(ev.arguments)})`));
    $("log").append(li);
    scrollLog();
  }

  toolResult(ev) {
    const li = el("li", `msg tool ${ev.ok ? "ok" : "failed"}`);
    li.append(el("span", "who", ev.ok ? "result" : "failed"), el("span", "text", ev.preview));
    $("log").append(li);
    scrollLog();
  }

  table(ev) {
    const li = el("li", "msg table");
    const table = el("table");
    if (ev.title) table.append(el("caption", "", ev.title));
    const head = el("tr");
    for (const c of ev.columns) head.append(el("th", "", c));
    table.append(head);
    for (const row of ev.rows) {
      const tr = el("tr");
      for (const cell of row) tr.append(el("td", "", cell));
      table.append(tr);
    }
    li.append(table);
    $("log").append(li);
    scrollLog();
  }

  // The approval a yes would answer, with its exact parameters; an empty id hides it.
  approval(ev) {
    const card = $("approval");
    card.dataset.id = ev.id;
    card.hidden = !ev.id;
    $("approval-text").textContent = ev.text || "";
    $("approval-params").textContent = ev.id ? `${ev.tool} ${JSON.stringify(ev.params)}` : "";
    for (const button of card.querySelectorAll("button")) button.disabled = !ev.id;
    if (ev.id) scrollLog();
  }

  meter(ev) {
    const meter = $("meter");
    const bar = $("meter-bar");
    const legend = $("meter-legend");
    const window = Math.max(1, ev.window);
    bar.replaceChildren();
    legend.replaceChildren();
    const parts = Object.entries(ev.by_component).filter(([, n]) => n > 0);
    for (const [name, tokens] of parts) {
      const seg = el("span", "seg");
      seg.style.width = `${(100 * tokens) / window}%`;
      seg.style.background = colorFor(name);
      seg.title = `${name}: ${tokens} tokens`;
      bar.append(seg);
      const item = el("li", "", `${name} ${tokens}`);
      item.style.setProperty("--c", colorFor(name));
      legend.append(item);
    }
    $("mark-1").style.left = `${100 * ev.tier1}%`;
    $("mark-2").style.left = `${100 * ev.tier2}%`;
    const pct = (100 * ev.used) / window;
    meter.dataset.used = String(ev.used);
    meter.dataset.window = String(ev.window);
    meter.dataset.updates = String(++this.meterUpdates);
    meter.classList.toggle("warn", ev.used >= ev.tier1 * window);
    meter.classList.toggle("high", ev.used >= ev.tier2 * window);
    $("meter-label").textContent = `${ev.used.toLocaleString()} / ${ev.window.toLocaleString()} (${pct.toFixed(1)}%)`;
    this.growth.push(Math.min(1, ev.used / window));
    this.tiers = [ev.tier1, ev.tier2];
    this.drawGrowth();
  }

  // Where each tier ran, against the curve's newest point at the time.
  compactionMark(tier) {
    this.runs.push({ at: this.growth.length - 1, tier });
    this.drawGrowth();
  }

  drawGrowth() {
    const H = 40;
    const drop = Math.max(0, this.growth.length - GROWTH_POINTS);
    const shown = this.growth.slice(drop);
    const x = (i) => (shown.length > 1 ? (100 * i) / (shown.length - 1) : 0);
    const y = (share) => (H * (1 - share)).toFixed(2);
    $("growth-line").setAttribute(
      "points",
      shown.map((share, i) => `${x(i).toFixed(2)},${y(share)}`).join(" "),
    );
    const [t1, t2] = this.tiers || [0.65, 0.8];
    for (const [id, share] of [["growth-t1", t1], ["growth-t2", t2]]) {
      $(id).setAttribute("y1", y(share));
      $(id).setAttribute("y2", y(share));
    }
    const runs = $("growth-runs");
    runs.replaceChildren();
    for (const run of this.runs) {
      const i = run.at - drop;
      if (i < 0) continue;
      const line = document.createElementNS("http://www.w3.org/2000/svg", "line");
      line.setAttribute("class", `run tier${run.tier}`);
      for (const [name, value] of [["x1", x(i)], ["x2", x(i)], ["y1", 0], ["y2", H]]) {
        line.setAttribute(name, String(value));
      }
      runs.append(line);
    }
    const svg = $("growth");
    svg.dataset.points = String(shown.length);
    svg.dataset.runs = String(runs.childElementCount);
  }

  compaction(ev) {
    this.compactionMark(ev.tier);
    const list = $("compactions");
    list.querySelector(".empty")?.remove();
    const when = new Date(ev.at * 1000).toLocaleTimeString();
    const li = el(
      "li",
      `tier${ev.tier}`,
      `${when} tier ${ev.tier}: ${ev.tokens_before} → ${ev.tokens_after} tokens, ` +
        `${ev.items_affected} items, re-prefill ${ev.reprefill_tokens}, ${ev.duration_ms.toFixed(0)} ms` +
        (ev.detail ? ` (${ev.detail})` : ""),
    );
    list.prepend(li);
  }

  latencyRow(ev) {
    let entry = this.latency.get(ev.turn_id);
    if (!entry) {
      const row = el("tr");
      row.dataset.turn = ev.turn_id;
      row.append(el("td", "num", String(this.latency.size + 1)), el("td", "stages"));
      $("latency").prepend(row);
      entry = { row, stages: {}, prepared: "" };
      this.latency.set(ev.turn_id, entry);
    }
    Object.assign(entry.stages, ev.stages);
    if (ev.prepared) entry.prepared = ev.prepared;
    // The voice pipeline's stages are a stacked bar of the wait, each part its share of the
    // total, with chips for the figures; the session loop's own timings (named *_ms) go in
    // the tooltip, so the row reads as one breakdown of the wait.
    const all = Object.entries(entry.stages);
    const voice = all.filter(([name]) => !name.endsWith("_ms"));
    const shown = voice.length ? voice : all;
    const cell = entry.row.querySelector(".stages");
    cell.replaceChildren(this.waitBar(entry.stages));
    for (const [name, ms] of shown) {
      const main = name.endsWith("_to_voice");
      cell.append(el("span", main ? "chip main" : "chip", `${name} ${Math.round(ms)}`));
    }
    if (entry.prepared) {
      const label = entry.prepared === "hit" ? "prepared in the pause" : "prepared, not used";
      cell.append(el("span", `chip prepared ${entry.prepared}`, label));
    }
    entry.row.title = all.map(([name, ms]) => `${name}: ${ms.toFixed(1)} ms`).join("\n");
  }

  // What dominated the wait: the parts in the order they happen, the rest as "other".
  waitBar(stages) {
    const bar = el("div", "wait-bar");
    const total = stages.voice_to_voice ?? stages.text_to_voice;
    if (!total) return bar;
    let counted = 0;
    for (const name of WAIT_PARTS) {
      const ms = stages[name];
      if (!ms || ms <= 0) continue;
      counted += ms;
      bar.append(this.waitPart(name, ms, total));
    }
    if (total > counted) bar.append(this.waitPart("other", total - counted, total));
    return bar;
  }

  waitPart(name, ms, total) {
    const part = el("span", `part ${name}`);
    part.style.width = `${Math.min(100, (100 * ms) / total).toFixed(1)}%`;
    part.title = `${name}: ${Math.round(ms)} ms`;
    return part;
  }

  // What the server is still readying (empty: ready); shown until a first answer is fast.
  warming(left, seconds) {
    const node = $("warming");
    node.hidden = !left.length;
    if (left.length) {
      node.textContent =
        `Warming up: getting ${left.join(" and ")} ready (${Math.round(seconds)} s). ` +
        "You can talk now; the first answer may be slow.";
    }
  }

  // The calendar URL's last refresh (`/healthz` "calendar"): a failed one is said, since the
  // schedule then answers from the last copy that was read.
  calendar(status) {
    const node = $("calendar-note");
    const failed = Boolean(status) && !status.ok;
    node.hidden = !failed;
    node.textContent = failed
      ? `Your calendar could not be refreshed: ${status.detail}. ` +
        "Schedule answers use the last copy read."
      : "";
  }

  voiceState(state) {
    const node = $("voice");
    node.dataset.state = state;
    node.textContent = state;
  }

  error(message) {
    $("error-text").textContent = message;
    $("error").hidden = !message;
  }

  connection(state, detail = "") {
    const node = $("conn");
    node.dataset.state = state;
    node.textContent = detail ? `${state}: ${detail}` : state;
    this.connectionNote(state, detail);
  }

  // Said in words under the bar: a connection that was up dropped, and later that it is back.
  // "unstable" is the browser no longer hearing the server (it may recover by itself);
  // "offline" with a reason is the device's own network gone; plain "offline" is the user
  // stopping, or a refusal the error box explains, so there is nothing to wait for.
  connectionNote(state, detail) {
    const note = $("conn-note");
    clearTimeout(this.noteTimer);
    if (state === "connected") {
      const back = !!this.lost;
      this.wasUp = true;
      this.lost = false;
      note.dataset.state = back ? "back" : "";
      note.textContent = back ? "Reconnected" : "";
      note.hidden = !back;
      if (back) this.noteTimer = setTimeout(() => (note.hidden = true), NOTE_SHOWN_MS);
    } else if (this.wasUp && (state === "reconnecting" || state === "unstable" || (state === "offline" && detail))) {
      this.lost = true;
      note.dataset.state = "lost";
      note.textContent = state === "offline"
        ? "Connection lost: this device is offline. Reconnecting when the network is back…"
        : "Connection lost, reconnecting…";
      note.hidden = false;
    } else if (state === "offline") {
      this.wasUp = false;
      this.lost = false;
      note.hidden = true;
    }
  }
}
