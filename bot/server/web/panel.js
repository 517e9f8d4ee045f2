// The "What Annie knows" panel: open tasks (those waiting on you first), reminders with their
// times, approvals waiting, and recent notes, from the server's "knowledge" snapshots. Each
// item's buttons send a panel action over the data channel; the server answers with a fresh
// snapshot (or an error), so the list always shows what is stored, never a guess. Deleting a
// note only asks: the approval appears with Approve and Deny like a spoken request's.

const $ = (id) => document.getElementById(id);

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

const WAITS_ON = { user: "waiting on you", assistant: "waiting on Annie", external: "waiting on others" };

function when(iso, ahead = true) {
  if (!iso) return "";
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  const minutes = Math.round((at.getTime() - Date.now()) / 60000);
  const local = at.toLocaleString([], { weekday: "short", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
  if (!ahead) return local;
  if (minutes < 0) return `${local} (overdue)`;
  if (minutes < 60) return `${local} (in ${minutes} min)`;
  return local;
}

export class Panel {
  // `send(message)` sends a panel action (connecting first if need be); `answer(id,
  // decision)` answers an approval exactly as the approval card's buttons do.
  constructor({ send, answer }) {
    this.send = send;
    this.answer = answer;
    this.updates = 0;
    this.acted = false;
  }

  // Filled before the page connects (read-only); the data channel keeps it fresh after.
  load(token) {
    fetch("/api/knowledge", { headers: token ? { "X-Annie-Token": token } : {} })
      .then((r) => (r.ok ? r.json() : null))
      .then((ev) => ev && !this.updates && this.render(ev))
      .catch(() => {});
  }

  render(ev) {
    this.list("k-tasks", ev.tasks, (t) => this.task(t), "No open tasks.");
    const shown = ev.tasks.length;
    $("k-tasks-count").textContent = ev.tasks_total > shown ? `${shown} of ${ev.tasks_total}` : String(ev.tasks_total);
    this.list("k-reminders", ev.reminders, (r) => this.reminder(r), "No reminders.");
    this.list("k-approvals", ev.approvals, (a) => this.approval(a), "Nothing waiting for approval.");
    this.list("k-notes", ev.notes, (n) => this.note(n), "No notes yet.");
    const panel = $("knowledge");
    panel.dataset.updates = String(++this.updates);
    $("knowledge-at").textContent = new Date(ev.at * 1000).toLocaleTimeString();
    $("knowledge-at").title = "when this list was read";
    if (!this.acted) $("knowledge-status").textContent = "";
  }

  // What the last action did (the list itself shows the outcome; this says it in words).
  result(ev) {
    this.acted = true;
    $("knowledge-status").textContent = ev.text;
  }

  // The server refused an action: the buttons work again (nothing changed).
  failed() {
    for (const button of $("knowledge").querySelectorAll("button[data-action]")) button.disabled = false;
  }

  list(id, items, render, empty) {
    const list = $(id);
    list.replaceChildren(...(items.length ? items.map(render) : [el("li", "empty", empty)]));
  }

  item(kind, id, text, meta) {
    const li = el("li", "k-item");
    li.dataset.kind = kind;
    li.dataset.id = id;
    const body = el("div", "k-body");
    body.append(el("span", "k-text", text));
    if (meta) body.append(el("span", "k-meta", meta));
    li.append(body, el("div", "k-actions"));
    return li;
  }

  button(li, label, onClick, cls = "") {
    const button = el("button", cls, label);
    button.type = "button";
    button.dataset.action = label.toLowerCase();
    button.addEventListener("click", () => {
      // Until the server answers with a fresh list or an error, one click is one action.
      button.disabled = true;
      onClick();
    });
    li.querySelector(".k-actions").append(button);
    return button;
  }

  act(action, id, extra = {}) {
    return this.send({ type: "panel", action, id, ...extra });
  }

  task(t) {
    const meta = [t.id, WAITS_ON[t.pending], t.status === "blocked" ? "blocked" : "", t.due ? `due ${when(t.due)}` : ""];
    const li = this.item("task", t.id, t.title, meta.filter(Boolean).join(" · "));
    li.dataset.pending = t.pending;
    li.dataset.status = t.status;
    this.button(li, "Done", () => this.act("task_done", t.id));
    return li;
  }

  reminder(r) {
    // Fired or announced: it is due and waits for Done or Snooze.
    const due = r.status === "scheduled" ? when(r.due) : `due now (${when(r.due, false)})`;
    const meta = [r.id, r.kind === "timer" ? "timer" : "", due].filter(Boolean).join(" · ");
    const li = this.item("reminder", r.id, r.text, meta);
    li.dataset.due = r.due;
    li.dataset.status = r.status;
    this.button(li, "Snooze", () => this.act("reminder_snooze", r.id, { minutes: 10 })).title = "Snooze ten minutes";
    this.button(li, "Done", () => this.act("reminder_done", r.id));
    return li;
  }

  approval(a) {
    const where = a.here ? "" : " · asked in another conversation";
    const li = this.item("approval", a.id, a.text, `${a.id} · expires ${when(a.expires_at)}${where}`);
    if (a.here) {
      this.button(li, "Approve", () => this.answer(a.id, "yes"), "approve");
      this.button(li, "Deny", () => this.answer(a.id, "no"), "deny");
    }
    return li;
  }

  note(n) {
    let meta = `${n.id} · ${n.kind} · ${when(n.updated_at || n.created_at, false)}`;
    if (n.version > 1) meta += ` · v${n.version}`;
    if (n.private) meta += " · private";
    if (n.contradicts) meta += ` · contradicts ${n.contradicts}: which is right?`;
    const li = this.item("note", n.id, n.text, meta);
    this.button(li, "Delete", () => this.act("note_delete", n.id), "deny").title = "Asks for your approval first";
    return li;
  }
}
