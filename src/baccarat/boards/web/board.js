// The web result board: reads /config.json (written by `baccarat board --web`), subscribes
// to {prefix}/{table}/# over MQTT-over-WebSocket and redraws once per animation frame.
//
// Query parameters override the configuration: ?table=T1&prefix=baccarat&lang=zh
// &ws=ws://broker:9001/mqtt. Languages: both (default), en, zh.

import mqtt from "./vendor/mqtt.esm.js";
import { applyLabels, LABELS, LANGUAGES } from "./labels.js";
import { BoardView } from "./render.js";
import {
  emptyState,
  fold,
  rejected,
  withControllerStatus,
  withLink,
} from "./state.js";

const RECONNECT_PERIOD_MS = 2000;
const CONNECT_TIMEOUT_MS = 5000;
const SKIPPED_TOPICS = new Set(["reply"]);

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
  const lang = LANGUAGES.includes(query.get("lang")) ? query.get("lang") : "both";
  const username = config.username || undefined;
  const password = config.password || undefined;
  return { table, prefix, url, lang, username, password };
}

function setLanguage(lang) {
  document.body.classList.remove(...LANGUAGES.map((l) => `lang-${l}`));
  document.body.classList.add(`lang-${lang}`);
  document.body.dataset.lang = lang;
  document.documentElement.lang = lang === "zh" ? "zh-Hant" : "en";
  const button = document.getElementById("language-toggle");
  const next = LANGUAGES[(LANGUAGES.indexOf(lang) + 1) % LANGUAGES.length];
  button.textContent = { both: "EN + 中文", en: "EN", zh: "中文" }[next];
  button.onclick = () => setLanguage(next);
  button.title = `${LABELS.language[0]} / ${LABELS.language[1]}`;
}

/** The kind of message a topic carries under {prefix}/{table}/, or null if not for boards. */
export function topicKind(base, topic) {
  if (!topic.startsWith(`${base}/`)) return null;
  const kind = topic.slice(base.length + 1);
  if (kind.startsWith("cmd/") || SKIPPED_TOPICS.has(kind)) return null;
  return kind;
}

async function main() {
  const config = await loadConfig();
  applyLabels(document);
  setLanguage(config.lang);
  const view = new BoardView(document);
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
    if (!scheduled) {
      scheduled = true;
      requestAnimationFrame(draw);
    }
  };
  window.board = { state, table: config.table, url: config.url };
  window.addEventListener("resize", () => {
    resized = true;
    update({ ...state });
  });
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
  client.on("connect", () => {
    update(withLink(state, "connected"));
    client.subscribe(`${base}/#`, { qos: 1 });
  });
  client.on("reconnect", () => update(withLink(state, "connecting")));
  client.on("offline", () => update(withLink(state, "lost")));
  client.on("error", (error) => console.warn("mqtt:", error.message));
  client.on("message", (topic, payload) => {
    const kind = topicKind(base, topic);
    if (kind === null) return;
    const text = new TextDecoder().decode(payload);
    if (kind === "status") {
      update(withControllerStatus(state, text));
      return;
    }
    let message;
    try {
      message = JSON.parse(text);
    } catch {
      update(rejected(state));
      return;
    }
    update(message && typeof message === "object" ? fold(state, message) : rejected(state));
  });
}

main();
