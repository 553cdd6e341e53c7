// The web result board: reads /config.json (written by `baccarat board --web`), subscribes
// to {prefix}/{table}/'s board topics (catalog.js BOARD_TOPICS: all but the live `edge`,
// never shown to players) over MQTT-over-WebSocket and redraws once per animation frame.
//
// Query parameters override the configuration: ?table=T1&prefix=baccarat&lang=zh-Hans
// &view=pit&ws=ws://broker:9001/mqtt. Languages (labels.js LANGUAGES): both (English and
// Traditional Chinese, the default), en, zh-Hant (or zh), zh-Hans, both-Hans. Views:
// players (the default: a short notice while an alarm is open), pit (the alarms in full).

import mqtt from "./vendor/mqtt.esm.js";
import { BOARD_TOPICS } from "./catalog.js";
import { applyLabels, LABELS, LANGUAGE_ORDER, LANGUAGES, languageMode } from "./labels.js";
import { BoardView } from "./render.js";
import { bodyText, receiveBody, skipped } from "./accept.js";
import { emptyState, withLink } from "./state.js";

const RECONNECT_PERIOD_MS = 2000;
const CONNECT_TIMEOUT_MS = 5000;

async function loadConfig() {
  let config = {};
  try {
    const response = await fetch("config.json", { cache: "no-store" });
    if (response.ok) config = await response.json();
  } catch {
    // served without the Python server (from a file or another web server): use the query
  }
  const query = new URLSearchParams(location.search);
  const table = query.get("table") || config.table || "";
  const prefix = query.get("prefix") || config.prefix || "baccarat";
  const port = config.ws_port || 9001;
  const path = config.ws_path || "/mqtt";
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const host = config.ws_host || location.hostname || "localhost";
  const url = query.get("ws") || `${scheme}://${host}:${port}${path}`;
  const lang = languageMode(query.get("lang")) || "both";
  const view = (query.get("view") || "").toLowerCase() === "pit" ? "pit" : "players";
  const username = config.username || undefined;
  const password = config.password || undefined;
  return { table, prefix, url, lang, view, username, password };
}

/** Show the labels in `lang`; `redraw` after the button changes it (the header is fitted again). */
function setLanguage(lang, redraw) {
  const body = document.body;
  for (const mode of Object.values(LANGUAGES)) body.classList.remove(...mode.classes);
  body.classList.add(...LANGUAGES[lang].classes);
  body.dataset.lang = lang;
  document.documentElement.lang = LANGUAGES[lang].html;
  const button = document.getElementById("language-toggle");
  const next = LANGUAGE_ORDER[(LANGUAGE_ORDER.indexOf(lang) + 1) % LANGUAGE_ORDER.length];
  button.textContent = LANGUAGES[next].button;
  button.onclick = () => {
    setLanguage(next, redraw);
    redraw();
  };
  button.title = LABELS.language.join(" / ");
}

/** The kind of message a topic carries under {prefix}/{table}/, or null if not for boards. */
export function topicKind(base, topic) {
  if (!topic.startsWith(`${base}/`)) return null;
  const kind = topic.slice(base.length + 1);
  if (skipped(kind)) return null;
  return kind;
}

async function main() {
  const config = await loadConfig();
  applyLabels(document);
  document.body.dataset.view = config.view;
  const view = new BoardView(document, config.view);
  let state = emptyState(config.table);
  let scheduled = false;
  let resized = false;

  const draw = () => {
    scheduled = false;
    view.render(state, resized);
    resized = false;
  };
  const update = (next) => {
    if (next === state) return;
    state = next;
    window.board.state = state;
    window.boardRefused = state.rejected;
    if (!scheduled) {
      scheduled = true;
      requestAnimationFrame(draw);
    }
  };
  setLanguage(config.lang, () => update({ ...state }));
  window.board = { state, table: config.table, url: config.url };
  window.boardRefused = 0; // bodies refused by accept.js: counted, never shown
  // The roads show as many whole columns as their windows hold: draw them again whenever
  // a window changes size (the screen, or the header taking another line).
  const resize = new ResizeObserver(() => {
    resized = true;
    update({ ...state });
  });
  for (const view of document.querySelectorAll(".road-view")) resize.observe(view);
  view.render(state, true);
  if (!config.table) {
    document.getElementById("no-table").hidden = false;
    return;
  }

  const base = `${config.prefix}/${config.table}`;
  const client = mqtt.connect(config.url, {
    clientId: `baccarat-board-${Math.random().toString(16).slice(2, 10)}`,
    clean: true,
    reconnectPeriod: RECONNECT_PERIOD_MS,
    connectTimeout: CONNECT_TIMEOUT_MS,
    keepalive: 30,
    username: config.username,
    password: config.password,
  });
  let connectedOnce = false;
  client.on("connect", () => {
    connectedOnce = true;
    update(withLink(state, "connected"));
    client.subscribe(BOARD_TOPICS.map((topic) => `${base}/${topic}`), { qos: 1 });
  });
  // "lost" once it had been connected: what is on the screen may be out of date
  client.on("reconnect", () => update(withLink(state, connectedOnce ? "lost" : "connecting")));
  client.on("offline", () => update(withLink(state, "lost")));
  client.on("error", (error) => console.warn("mqtt:", error.message));
  client.on("message", (topic, payload) => {
    const kind = topicKind(base, topic);
    if (kind === null) return;
    const text = bodyText(kind, payload); // null: longer than its topic allows, not decoded
    // checked against its topic first (accept.js); a retained message cleared is skipped
    update(receiveBody(state, kind, text, config.table, payload.length));
  });
}

main();
