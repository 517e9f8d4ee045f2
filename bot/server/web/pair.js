// The pairing page: a new device types the code Annie's machine shows and a name for itself.
// The server answers with this device's own token in a cookie the page cannot read (Secure,
// HttpOnly, SameSite=Strict), so from then on the browser carries it to Annie by itself. A
// code in the address (from the QR code) fills the box and is taken out of the address at
// once, so it stays out of the history.

const $ = (id) => document.getElementById(id);

function takeCode() {
  const url = new URL(location.href);
  const code = url.searchParams.get("code");
  if (code === null) return "";
  url.searchParams.delete("code");
  history.replaceState(history.state, "", url.pathname + url.search + url.hash);
  return /^\d{6}$/.test(code) ? code : "";
}

// A first guess at a name a person would recognise in the devices list.
function guessName() {
  const ua = navigator.userAgent;
  if (/iPhone/.test(ua)) return "iPhone";
  if (/iPad/.test(ua)) return "iPad";
  if (/Android/.test(ua)) return /Mobile/.test(ua) ? "Android phone" : "Android tablet";
  if (/Macintosh/.test(ua)) return "Mac";
  if (/Windows/.test(ua)) return "Windows PC";
  if (/Linux/.test(ua)) return "Linux computer";
  return "";
}

function say(text, kind = "") {
  const status = $("pair-status");
  status.textContent = text;
  status.dataset.kind = kind;
}

async function pair(event) {
  event.preventDefault();
  const code = $("pair-code").value.trim();
  const name = $("pair-name").value.trim();
  if (!/^\d{6}$/.test(code)) return say("The code is the six digits Annie's machine shows.", "error");
  if (!name) return say("Give this device a name, like “Kitchen phone”.", "error");
  $("pair-submit").disabled = true;
  say("Pairing…");
  try {
    const response = await fetch("/api/pair", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ code, name }),
    });
    let data = {};
    try {
      data = await response.json();
    } catch {
      /* the status says enough */
    }
    if (!response.ok) {
      say(data.reason || `Pairing was refused (HTTP ${response.status}).`, "error");
      return;
    }
    say(`Paired as “${data.device}”. Opening Annie…`);
    $("pair-form").hidden = true;
    $("pair-done").hidden = false;
    setTimeout(() => location.assign("/"), 1500);
  } catch {
    say(`Cannot reach Annie at ${location.host}. Is the server running, and is this device on the same network?`, "error");
  } finally {
    $("pair-submit").disabled = false;
  }
}

async function init() {
  $("pair-code").value = takeCode();
  $("pair-name").value = guessName();
  $("pair-form").addEventListener("submit", pair);
  if (!window.isSecureContext) {
    say("This page is not on a secure (https) address, so the browser cannot keep the pairing. Open Annie's https:// address.", "error");
  }
  try {
    const r = await fetch("/api/pairing");
    const me = r.ok ? await r.json() : {};
    if (me.device) {
      const note = $("pair-already");
      note.textContent = `This device is already paired as “${me.device}”. Pairing again adds it under a new name.`;
      note.hidden = false;
    }
  } catch {
    /* the form still works; its own errors will say what is wrong */
  }
  $(($("pair-code").value ? "pair-name" : "pair-code")).focus();
}

init();
