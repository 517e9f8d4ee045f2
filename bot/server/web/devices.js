// Phones and laptops on Annie's own page: "Pair a phone" shows a one-time code with a QR
// code of the pairing address, and the paired devices are listed with a Revoke button each.
// Only the owner (this machine, or whoever holds the server token) sees the section. A
// browser elsewhere that is not paired yet is sent to the pairing page.

const $ = (id) => document.getElementById(id);
const POLL_MS = 3000;
let shown = null; // { code, expires, timer } while a code is on screen
let known = new Set(); // device ids already listed, to notice the one that pairs

function headers(json = false) {
  // The token the page was opened with: app.js keeps it for this tab, after taking it out of
  // the address (this module runs first, so on the first load it is still there).
  const token = sessionStorage.getItem("annie.token") || new URL(location.href).searchParams.get("token") || "";
  const h = json ? { "Content-Type": "application/json" } : {};
  if (token) h["X-Annie-Token"] = token;
  return h;
}

function say(text) {
  $("devices-status").textContent = text;
}

async function call(path, options = {}) {
  const response = await fetch(path, options);
  let data = {};
  try {
    data = await response.json();
  } catch {
    /* the status says enough */
  }
  if (!response.ok) throw new Error(data.reason || `HTTP ${response.status}`);
  return data;
}

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

function localTime(iso) {
  return iso ? new Date(iso).toLocaleString([], { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" }) : "";
}

function row(device) {
  const item = el("li", "k-item");
  item.dataset.id = device.id;
  const body = el("span", "k-body");
  body.append(el("span", "k-text", device.name));
  const seen = device.last_seen_at ? `last seen ${localTime(device.last_seen_at)}` : "not seen yet";
  const meta = device.revoked_at ? `unpaired ${localTime(device.revoked_at)}` : `paired ${localTime(device.created_at)} · ${seen}`;
  body.append(el("span", "k-meta", meta));
  item.append(body);
  if (device.revoked_at) {
    item.dataset.revoked = "";
  } else {
    const actions = el("span", "k-actions");
    const button = el("button", "deny", "Revoke");
    button.type = "button";
    button.addEventListener("click", () => revoke(device, button));
    actions.append(button);
    item.append(actions);
  }
  return item;
}

async function refresh() {
  const { devices } = await call("/api/devices", { headers: headers() });
  const list = $("devices-list");
  list.replaceChildren(...devices.map(row));
  if (!devices.length) list.append(el("li", "empty", "No phones or laptops paired yet."));
  const fresh = devices.filter((d) => !known.has(d.id) && !d.revoked_at);
  if (shown && fresh.length) {
    hideCode();
    say(`Paired: ${fresh.map((d) => d.name).join(", ")}.`);
  }
  known = new Set(devices.map((d) => d.id));
}

async function revoke(device, button) {
  if (!confirm(`Revoke “${device.name}”? It will have to pair again to talk to Annie.`)) return;
  button.disabled = true;
  try {
    await call("/api/devices/revoke", { method: "POST", headers: headers(true), body: JSON.stringify({ device: device.id }) });
    say(`Revoked “${device.name}”.`);
  } catch (err) {
    say(`Could not revoke “${device.name}”: ${err.message}`);
  }
  await refresh().catch(() => {});
}

function hideCode() {
  if (shown) clearInterval(shown.timer);
  shown = null;
  $("pair-code-box").hidden = true;
}

function tick() {
  if (!shown) return;
  const left = Math.round((shown.expires - Date.now()) / 1000);
  if (left <= 0) {
    hideCode();
    say("The code expired. Press Pair a phone for a new one.");
    return;
  }
  $("pair-expiry").textContent = `Expires in ${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
  if (left % (POLL_MS / 1000) === 0) refresh().catch(() => {});
}

async function newCode() {
  say("");
  try {
    const data = await call("/api/pairing-code", { method: "POST", headers: headers(true), body: "{}" });
    hideCode();
    $("pair-code-digits").textContent = data.code;
    $("pair-qr").src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(data.qr_svg)}`;
    $("pair-url").textContent = data.url;
    $("pair-code-box").hidden = false;
    shown = { code: data.code, expires: Date.now() + data.expires_in_s * 1000, timer: setInterval(tick, 1000) };
    tick();
    say("On the phone, scan the QR code (or open the address) and type the code.");
  } catch (err) {
    say(`No code: ${err.message}`);
  }
}

async function init() {
  let me;
  try {
    me = await call("/api/pairing", { headers: headers() });
  } catch {
    return; // an older server, or none: app.js reports a server it cannot reach
  }
  if (me.pair) {
    location.assign("/pair");
    return;
  }
  if (!me.owner) return;
  $("devices").hidden = false;
  $("pair-start").addEventListener("click", newCode);
  await refresh().catch((err) => say(`Could not list the devices: ${err.message}`));
}

init();
