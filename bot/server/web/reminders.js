// Reminders on the page: a reminder Annie says appears in the conversation, marked as one,
// with a short chime made here with Web Audio (no sound file to fetch). Browsers only let a
// page make sound after the user has interacted with it, so the audio context is created
// and resumed on the first click or key press, and a chime before that is shown silently.

const $ = (id) => document.getElementById(id);
let ctx = null;

function audioContext() {
  if (!ctx) {
    try {
      ctx = new AudioContext();
    } catch {
      return null;
    }
  }
  if (ctx.state === "suspended") ctx.resume().catch(() => {});
  return ctx;
}

for (const kind of ["click", "keydown"]) {
  window.addEventListener(kind, () => audioContext(), { capture: true });
}

// Two rising notes, a quarter of a second in all, with soft edges so they do not click.
function chime(log) {
  const ac = audioContext();
  if (!ac) return;
  const start = ac.currentTime + 0.02;
  for (const [i, freq] of [880, 1320].entries()) {
    const osc = ac.createOscillator();
    const gain = ac.createGain();
    const t = start + i * 0.13;
    osc.type = "sine";
    osc.frequency.value = freq;
    gain.gain.setValueAtTime(0.0001, t);
    gain.gain.exponentialRampToValueAtTime(0.25, t + 0.02);
    gain.gain.exponentialRampToValueAtTime(0.0001, t + 0.12);
    osc.connect(gain).connect(ac.destination);
    osc.start(t);
    osc.stop(t + 0.13);
  }
  log.push({ at: Date.now(), audio: ac.state });
}

// `chimes` (a list on window.annie) records each chime and the audio context's state.
export function showReminder(ev, chimes) {
  const li = document.createElement("li");
  li.className = "msg annie reminder";
  li.dataset.turn = ev.turn_id || "";
  li.dataset.ids = (ev.reminders || []).map((r) => r.id).join(" ");
  const who = document.createElement("span");
  who.className = "who";
  who.textContent = ev.elsewhere
    ? "Annie · reminder, said on your other device"
    : ev.away
      ? "Annie · while you were away"
      : "Annie · reminder";
  const text = document.createElement("span");
  text.className = "text";
  text.textContent = ev.text;
  li.append(who, text);
  $("log").append(li);
  $("log").scrollTop = $("log").scrollHeight;
  chime(chimes);
}
