// The voice page: one WebRTC connection to the Annie server (microphone up, Annie's voice
// down, events on a data channel), the talk/stop button, the text box, reconnection, and
// plain-language errors. aiortc does not trickle ICE, so the offer is posted only after
// candidate gathering completes (or a timeout passes).

import "./devices.js";
import { Panel } from "./panel.js";
import { showReminder } from "./reminders.js";
import { View } from "./view.js";

const $ = (id) => document.getElementById(id);
const view = new View();
const panel = new Panel({ send: sendOrConnect, answer: answerApproval });
const token = takeToken();
const ICE_GATHER_TIMEOUT_MS = 3000;
// How often the page reads the server's health once it is warm (the calendar URL's refresh).
const HEALTH_EVERY_MS = 30000;

// The access token arrives in the link the server printed (?token=…). It is taken out of the
// address at once, so it does not stay in the address bar, the history or a bookmark, and is
// kept for this tab only (a reload still works); it travels as the X-Annie-Token header.
function takeToken() {
  const url = new URL(location.href);
  const given = url.searchParams.get("token");
  if (given === null) return sessionStorage.getItem("annie.token") || "";
  sessionStorage.setItem("annie.token", given);
  url.searchParams.delete("token");
  history.replaceState(history.state, "", url.pathname + url.search + url.hash);
  return given;
}

const state = {
  pc: null,
  dc: null,
  mic: null, // MediaStream
  sender: null,
  connecting: null, // Promise while a connection is being set up
  wanted: false, // the user wants a connection (reconnect on loss)
  sessionId: localStorage.getItem("annie.session") || "",
  retries: 0,
  retryTimer: 0,
  pendingText: [],
  pendingPanel: [], // panel actions clicked before the data channel opened
  speaking: false,
  audio: { bytes: 0, energy: 0, packets: 0 },
  chimes: [], // reminder chimes played (reminders.js)
};
window.annie = state; // inspection from the console and from tests
state.view = view;

function setTalkMode(mode) {
  const button = $("talk");
  button.dataset.mode = mode;
  button.setAttribute("aria-pressed", String(mode === "stop"));
  $("talk-label").textContent = mode === "stop" ? "Stop" : "Talk";
}

function micLive() {
  return !!(state.mic && state.mic.getAudioTracks().some((t) => t.enabled && t.readyState === "live"));
}

async function getMicrophone() {
  if (!navigator.mediaDevices?.getUserMedia) {
    throw new Error("This page cannot use the microphone here: open it over https or on localhost. You can still type.");
  }
  try {
    // Echo cancellation keeps Annie's own voice out of the microphone (barge-in relies on it).
    // Automatic gain control stays off: it pumps close-talk speech into clipping, and the
    // recognizer and the VAD cope with level differences themselves.
    return await navigator.mediaDevices.getUserMedia({
      audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: false, channelCount: 1 },
      video: false,
    });
  } catch (err) {
    if (err.name === "NotAllowedError" || err.name === "SecurityError") {
      throw new Error("Microphone access was denied. Allow the microphone for this site in the browser settings, or type below.");
    }
    if (err.name === "NotFoundError" || err.name === "OverconstrainedError") {
      throw new Error("No microphone was found. Plug one in, or type below.");
    }
    if (err.name === "NotReadableError") {
      throw new Error("The microphone is busy in another application.");
    }
    throw new Error(`Microphone error: ${err.message || err.name}`);
  }
}

function waitForIceGathering(pc) {
  if (pc.iceGatheringState === "complete") return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      pc.removeEventListener("icegatheringstatechange", check);
      clearTimeout(timer);
      resolve();
    };
    const check = () => pc.iceGatheringState === "complete" && done();
    const timer = setTimeout(done, ICE_GATHER_TIMEOUT_MS);
    pc.addEventListener("icegatheringstatechange", check);
  });
}

async function postOffer(pc) {
  const headers = { "Content-Type": "application/json" };
  if (token) headers["X-Annie-Token"] = token;
  const body = { sdp: pc.localDescription.sdp, type: pc.localDescription.type };
  if (state.sessionId) body.resume = state.sessionId;
  let response;
  try {
    response = await fetch("/api/offer", { method: "POST", headers, body: JSON.stringify(body) });
  } catch {
    throw new Error(`Cannot reach the Annie server at ${location.host}. Is it running?`);
  }
  let data = {};
  try {
    data = await response.json();
  } catch {
    /* a non-JSON error page; the status says enough */
  }
  if (response.status === 401) {
    throw new Error("The server needs its access token: open the link it printed (…?token=…).");
  }
  if (response.status === 403) {
    // This page's address or origin is not one the server answers to (server.allowed_hosts).
    throw new Error(`The server refused this page: ${data.reason || "HTTP 403"}`);
  }
  if (response.status === 503) {
    throw new Error(data.reason || "Annie is busy: too many open sessions. Close another tab and retry.");
  }
  if (!response.ok) throw new Error(data.reason || `The server refused the connection (HTTP ${response.status}).`);
  return data;
}

function onEvent(ev) {
  switch (ev.type) {
    case "transcript":
      if (ev.final) view.userSaid(ev.text, { endedBy: ev.ended_by });
      else view.partial(ev.text);
      break;
    case "assistant_delta":
      view.delta(ev.turn_id, ev.text);
      break;
    case "state_answer":
      view.stateAnswer(ev);
      break;
    case "assistant_done":
      view.done(ev);
      break;
    case "tool_call":
      view.toolCall(ev);
      break;
    case "tool_result":
      view.toolResult(ev);
      break;
    case "table":
      view.table(ev);
      break;
    case "approval":
      view.approval(ev);
      break;
    case "knowledge":
      panel.render(ev);
      break;
    case "panel_result":
      panel.result(ev);
      break;
    case "reminder":
      showReminder(ev, state.chimes);
      break;
    case "context":
      view.meter(ev);
      break;
    case "compaction":
      view.compaction(ev);
      break;
    case "latency":
      view.latencyRow(ev);
      break;
    case "voice_state":
      state.speaking = ev.state === "speaking";
      view.voiceState(ev.state);
      break;
    case "error":
      if (ev.where === "panel") panel.failed();
      view.error(ev.where ? `${ev.message} (${ev.where})` : ev.message);
      break;
    default:
      break;
  }
}

function teardown() {
  const { pc } = state;
  state.pc = null;
  state.dc = null;
  state.sender = null;
  if (pc) {
    pc.onconnectionstatechange = null;
    pc.close();
  }
}

function scheduleReconnect(why) {
  teardown();
  if (!state.wanted) {
    view.connection("offline");
    return;
  }
  const delay = Math.min(10000, 1000 * 2 ** state.retries);
  state.retries += 1;
  view.connection("reconnecting", why);
  clearTimeout(state.retryTimer);
  state.retryTimer = setTimeout(() => connect().catch(() => {}), delay);
}

async function openConnection() {
  view.connection("connecting");
  const pc = new RTCPeerConnection({ iceServers: [] });
  state.pc = pc;
  const transceiver = pc.addTransceiver("audio", { direction: "sendrecv" });
  state.sender = transceiver.sender;
  if (state.mic) await state.sender.replaceTrack(state.mic.getAudioTracks()[0]);

  const dc = pc.createDataChannel("events", { ordered: true });
  state.dc = dc;
  dc.onopen = () => {
    for (const text of state.pendingText.splice(0)) dc.send(JSON.stringify({ type: "text", text }));
    for (const message of state.pendingPanel.splice(0)) dc.send(JSON.stringify(message));
  };
  dc.onmessage = (msg) => {
    try {
      onEvent(JSON.parse(msg.data));
    } catch (err) {
      console.error("bad event", err, msg.data);
    }
  };
  pc.ontrack = (ev) => {
    const audio = $("remote");
    audio.srcObject = ev.streams[0] || new MediaStream([ev.track]);
    audio.play().catch(() => {});
    watchLevel(audio.srcObject, "out-level");
  };
  pc.onconnectionstatechange = () => {
    if (state.pc !== pc) return;
    const s = pc.connectionState;
    if (s === "connected") {
      state.retries = 0;
      view.connection("connected");
      view.error("");
    } else if (s === "failed" || s === "closed") {
      scheduleReconnect("connection lost");
    } else if (s === "disconnected") {
      view.connection("unstable");
    }
  };

  await pc.setLocalDescription(await pc.createOffer());
  await waitForIceGathering(pc);
  const answer = await postOffer(pc);
  if (state.pc !== pc) return;
  state.sessionId = answer.session_id;
  localStorage.setItem("annie.session", state.sessionId);
  await pc.setRemoteDescription({ type: answer.type, sdp: answer.sdp });
}

async function connect() {
  state.wanted = true;
  if (state.pc) return state.connecting;
  state.connecting = openConnection().catch((err) => {
    view.error(err.message);
    const fatal = /token|busy|refused/.test(err.message);
    if (fatal) {
      state.wanted = false;
      teardown();
      view.connection("offline");
    } else {
      scheduleReconnect("retrying");
    }
    throw err;
  });
  try {
    await state.connecting;
  } finally {
    state.connecting = null;
  }
}

// Approve and Deny (on the approval card or in the panel) answer exactly as a spoken yes or
// no would; the server checks that the approval answered is still the one waiting.
function answerApproval(id, decision) {
  for (const b of $("approval").querySelectorAll("button")) b.disabled = true;
  view.userSaid(decision, { typed: true });
  if (!send({ type: "approval", id, decision })) view.error("Not connected: the answer was not sent.");
}

// Panel actions wait for the connection like typed text does, opening one if needed.
function sendOrConnect(obj) {
  if (send(obj)) return;
  state.pendingPanel.push(obj);
  connect().catch(() => {});
}

function send(obj) {
  if (state.dc && state.dc.readyState === "open") {
    state.dc.send(JSON.stringify(obj));
    return true;
  }
  return false;
}

async function startTalking() {
  try {
    if (!state.mic) {
      state.mic = await getMicrophone();
      watchLevel(state.mic, "mic-level");
      if (state.sender) await state.sender.replaceTrack(state.mic.getAudioTracks()[0]);
    }
    for (const t of state.mic.getAudioTracks()) t.enabled = true;
    setTalkMode("stop");
    $("audio-info").textContent = "Listening… speak whenever you like; talk over Annie to interrupt her.";
    view.error("");
    await connect();
  } catch (err) {
    view.error(err.message);
    setTalkMode("talk");
  }
}

function stopTalking() {
  if (state.mic) for (const t of state.mic.getAudioTracks()) t.enabled = false;
  if (state.speaking) send({ type: "interrupt" });
  setTalkMode("talk");
  $("audio-info").textContent = "Microphone off. Press Talk to speak again.";
}

// A level meter for a stream, through Web Audio (it also shows that audio really arrives).
const levelContexts = new Map();
function watchLevel(stream, meterId) {
  try {
    const ctx = levelContexts.get(meterId) || new AudioContext();
    levelContexts.set(meterId, ctx);
    ctx.resume().catch(() => {});
    const analyser = ctx.createAnalyser();
    analyser.fftSize = 512;
    ctx.createMediaStreamSource(stream).connect(analyser);
    const data = new Float32Array(analyser.fftSize);
    const meter = $(meterId);
    const tick = () => {
      analyser.getFloatTimeDomainData(data);
      let sum = 0;
      for (const v of data) sum += v * v;
      meter.value = Math.min(1, Math.sqrt(sum / data.length) * 4);
      requestAnimationFrame(tick);
    };
    tick();
  } catch {
    /* level meters are decoration; audio works without them */
  }
}

// Receiving statistics: how much of Annie's audio actually arrived.
async function pollStats() {
  const { pc } = state;
  if (pc) {
    const stats = await pc.getStats().catch(() => null);
    stats?.forEach((s) => {
      if (s.type === "inbound-rtp" && s.kind === "audio") {
        state.audio = {
          bytes: s.bytesReceived || 0,
          packets: s.packetsReceived || 0,
          energy: s.totalAudioEnergy || 0,
        };
      }
    });
  }
  setTimeout(pollStats, 500);
}

function init() {
  $("talk").addEventListener("click", () => {
    if ($("talk").dataset.mode === "stop") stopTalking();
    else startTalking();
  });
  $("text-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const input = $("text");
    const text = input.value.trim();
    if (!text) return;
    input.value = "";
    view.userSaid(text, { typed: true });
    if (!send({ type: "text", text })) {
      state.pendingText.push(text);
      connect().catch(() => {});
    }
  });
  for (const [button, decision] of [["approve", "yes"], ["deny", "no"]]) {
    $(button).addEventListener("click", () => {
      const { id } = $("approval").dataset;
      if (id) answerApproval(id, decision);
    });
  }
  $("error-close").addEventListener("click", () => view.error(""));
  window.addEventListener("online", () => state.wanted && !state.pc && connect().catch(() => {}));
  window.addEventListener("offline", () => view.connection("offline", "network lost"));
  window.addEventListener("pagehide", () => teardown());
  panel.load(token);
  watchWarmUp();
  pollStats();
}

// On a first start the server still readies its models after it answers (the model's shared
// instructions, the voice's common phrases): say so until a first answer can be fast. After
// that the server's health is read every half minute for the calendar URL's last refresh.
async function watchWarmUp() {
  const started = Date.now();
  let warm = false;
  for (;;) {
    let health = null;
    try {
      const r = await fetch("/healthz");
      if (!r.ok && !warm) {
        view.error(`The Annie server answered HTTP ${r.status}.`);
        return;
      }
      if (r.ok) health = await r.json();
    } catch {
      if (!warm) {
        view.error(`Cannot reach the Annie server at ${location.host}. Is it running?`);
        return;
      }
    }
    if (health) {
      view.calendar(health.calendar);
      const left = health.warming || [];
      view.warming(left, (Date.now() - started) / 1000);
      warm = warm || !left.length;
    }
    await new Promise((resolve) => setTimeout(resolve, warm ? HEALTH_EVERY_MS : 1000));
  }
}

init();
