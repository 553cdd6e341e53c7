// The pit console: the operator logs in with their broker account (MQTT 5 over WebSocket),
// sees every table under {prefix}/+/, settles alarms and sends commands on
// {prefix}/{table}/cmd/{command}/{operator} with the response topic
// {prefix}/{table}/reply/{operator} and a correlation id, and sets each table's limits
// (retained on {prefix}/{table}/limits). The broker's ACL decides what the account may
// do: a probe at login (below) finds out whether it may send commands, and every publish
// the broker refuses says so in the page.
//
// Query parameters: ?prefix=baccarat&ws=ws://broker:9001/mqtt override config.json.

import mqtt from "./vendor/mqtt.esm.js";
import { ALARM_WORDS, fillTexts, LABELS, LANGUAGE_ORDER, LANGUAGES } from "./board/labels.js";
import { blockingAlarms, cardsLeft } from "./board/state.js";
import {
  alarmActions,
  alarmKey,
  betWords,
  bulkText,
  commandTopic,
  dealHint,
  emptyConsole,
  ageText,
  fitTiles,
  floorQueue,
  floorTopics,
  FLOOR_SUBSCRIPTION,
  groupTables,
  secondCopy,
  TABLE_SUBSCRIPTION,
  isReply,
  notices,
  openAlarms,
  shortFigure,
  tableTopic,
  LIMIT_BETS,
  limitsBody,
  loginError,
  parseTopic,
  receive,
  refusedCount,
  replyTopic,
  tableActions,
  tableNames,
  withBulk,
  withBulkOver,
  withDismissed,
  withSendError,
  withSent,
} from "./console.js";
import { edgeText } from "./edge.js";
import { HistoryView } from "./history.js";
import { PIT } from "./pit_labels.js";
import { alarmSentence, articleWords, commandWords, consoleLanguage, kindWords, pitSay, say, wordsIn } from "./words.js";

const CONNECT_TIMEOUT_MS = 8000;
const RECONNECT_PERIOD_MS = 2000;
const REPLY_WAIT_MS = 10000;
const SHOWN_RESULTS = 12;
const SHOWN_NOTICES = 3;
const TILE_RESULTS = 10;
const TILE_GAP = 4;
/** Room kept under the floor, in pixels (the layout's padding). */
const FLOOR_MARGIN = 12;
const AGE_EVERY_MS = 1000;
/** Not a table: the permission probe's topic level (nothing subscribes to it). */
const PROBE_TABLE = "pit-console-probe";
/** A result's letter on a tile and in a table's summary: B, P, T (莊, 閒, 和). */
const LETTER = { banker: ["B", "莊", "庄"], player: ["P", "閒", "闲"], tie: ["T", "和", "和"] };
/** The tile's data-results: the letters in English whatever the language (for tests). */
const WINNER_CODE = { banker: "B", player: "P", tie: "T" };

async function loadConfig() {
  let config = {};
  try {
    const response = await fetch("config.json", { cache: "no-store" });
    if (response.ok) config = await response.json();
  } catch {
    // served without the Python server: use the query
  }
  const query = new URLSearchParams(location.search);
  const prefix = query.get("prefix") || config.prefix || "baccarat";
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const host = config.ws_host || location.hostname || "localhost";
  const url = query.get("ws") || `${scheme}://${host}:${config.ws_port || 9001}${config.ws_path || "/mqtt"}`;
  return { prefix, url, lang: consoleLanguage(query.get("lang")) };
}

const $ = (id) => document.getElementById(id);

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (name === "class") node.className = value;
    else if (name.startsWith("data-")) node.setAttribute(name, value);
    else node[name] = value;
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

class PitConsole {
  constructor(config) {
    this.config = config;
    this.state = emptyConsole();
    this.client = null;
    this.operator = "";
    this.mayCommand = null; // null: not known yet; then true or false (the probe's answer)
    this.link = "login";
    this.tiles = new Map(); // table -> its tile on the floor
    this.areaLabels = new Map(); // area -> its label on the floor
    this.areas = []; // [{name, tables}] from areas.json (baccarat pit --areas FILE)
    this.view = null; // the table whose own view is open, or null: the floor
    this.card = null; // that table's card
    this.fitted = "";
    this.queueKey = null;
    this.waiting = new Map(); // request id -> resolve(reply)
    this.sequence = 0;
    this.scheduled = false;
    this.drawnReplies = null;
    this.lang = config.lang;
    this.rights = null; // what the probe found, said in the header
    this.history = new HistoryView(() => {
      $("layout").hidden = false;
    }, this.lang);
    window.pit = this;
  }

  // ---- login ---------------------------------------------------------------------

  start() {
    $("login-form").addEventListener("submit", (event) => {
      event.preventDefault();
      this.login($("username").value.trim(), $("password").value);
    });
    $("logout").addEventListener("click", () => this.logout());
    $("table-back").addEventListener("click", () => this.closeTable());
    window.addEventListener("resize", () => {
      this.fitted = "";
      this.schedule();
    });
    setInterval(() => this.drawAges(), AGE_EVERY_MS);
    this.setLanguage(this.lang);
    this.setLink("login");
  }

  /**
   * Show the console in the language mode `lang` (the board's: labels.js LANGUAGES), chosen
   * by ?lang= and changed by the header's button, in the board's order; everything drawn
   * is drawn again in it.
   */
  setLanguage(lang) {
    this.lang = lang;
    this.history.lang = lang;
    document.documentElement.lang = LANGUAGES[lang].html;
    document.body.dataset.lang = lang;
    applyPitLabels(document, lang);
    const button = $("language-toggle");
    const next = LANGUAGE_ORDER[(LANGUAGE_ORDER.indexOf(lang) + 1) % LANGUAGE_ORDER.length];
    button.textContent = LANGUAGES[next].button;
    button.title = say(LABELS.language, lang);
    button.onclick = () => this.setLanguage(next);
    for (const tile of this.tiles.values()) tile.key = "";
    this.areaLabels.clear();
    this.queueKey = null;
    this.drawnReplies = null;
    if (this.view !== null) {
      this.card = this.newCard(this.view);
      $("table-card").replaceChildren(this.card.root);
    }
    this.history.redraw();
    this.drawRights();
    this.setLink(this.link);
  }

  /** The console's own label `key` filled from `values`, in the page's language. */
  t(key, values = {}) {
    return pitSay(key, values, this.lang);
  }

  async login(username, password) {
    if (!username) {
      this.loginFailed(this.t("type_username"));
      return;
    }
    this.logout();
    this.operator = username;
    $("login-error").hidden = true;
    $("login-button").disabled = true;
    this.setLink("connecting");
    await this.history.login(username, password); // first: the broker's check takes the client id
    const client = mqtt.connect(this.config.url, {
      protocolVersion: 5,
      clientId: username, // the example broker gives each client its username as id anyway
      clean: true,
      username,
      password,
      connectTimeout: CONNECT_TIMEOUT_MS,
      reconnectPeriod: RECONNECT_PERIOD_MS,
      keepalive: 30,
    });
    this.client = client;
    let loggedIn = false;
    client.on("connect", () => {
      loggedIn = true;
      $("password").value = "";
      this.showConsole();
      this.history.watchQuarantine();
      this.setLink("connected");
      client.subscribe(floorTopics(this.config.prefix, username), this.subscription(FLOOR_SUBSCRIPTION));
      if (this.view !== null) {
        client.subscribe(tableTopic(this.config.prefix, this.view), this.subscription(TABLE_SUBSCRIPTION));
      }
      this.probe();
    });
    client.on("error", (error) => {
      if (!loggedIn) {
        client.end(true);
        this.loginFailed(this.say(loginError(error)));
      } else {
        console.warn("mqtt:", error.message);
      }
    });
    client.on("reconnect", () => this.setLink(loggedIn ? "lost" : "connecting"));
    client.on("offline", () => this.setLink(loggedIn ? "lost" : "connecting"));
    client.on("close", () => {
      if (!loggedIn && this.client === client && this.link === "connecting") {
        client.end(true);
        this.loginFailed(this.t("unreachable", { url: this.config.url }));
      }
    });
    client.on("message", (topic, payload, packet) => {
      const ids = packet && packet.properties ? packet.properties.subscriptionIdentifier : undefined;
      if (secondCopy(this.config.prefix, topic, ids)) return;
      const text = new TextDecoder().decode(payload);
      this.update(receive(this.state, this.config.prefix, topic, text, payload.length));
      this.settleWaiting(topic, text);
    });
  }

  loginFailed(text) {
    this.setLink("login");
    $("login-button").disabled = false;
    const box = $("login-error");
    box.textContent = text;
    box.hidden = false;
    document.body.dataset.loginError = text;
  }

  logout() {
    if (this.client) this.history.logout();
    if (this.client) this.client.end(true);
    this.client = null;
    this.mayCommand = null;
    this.rights = null;
    this.state = emptyConsole();
    this.closeTable();
    this.tiles.clear();
    this.queueKey = null;
    $("floor").replaceChildren();
    this.history.close();
    $("layout").hidden = false;
    $("console").hidden = true;
    $("login").hidden = false;
    $("login-button").disabled = false;
    this.setLink("login");
    this.draw();
  }

  showConsole() {
    $("login").hidden = true;
    $("console").hidden = false;
    $("operator").textContent = this.operator;
    delete document.body.dataset.loginError;
  }

  setLink(link) {
    this.link = link;
    document.body.dataset.link = link;
    $("link").dataset.link = link;
    const words = { connected: LABELS.connected, lost: LABELS.lost, connecting: LABELS.connecting }[link];
    $("link").textContent = words ? this.say(words) : "";
    this.schedule();
  }

  /**
   * May this account send commands? mosquitto has no way to ask, so publish once, at QoS
   * 1, to a command topic in the operator's own name under a table that does not exist:
   * an MQTT 5 broker answers "not authorized" (0x87) in the PUBACK when its ACL refuses
   * it, and nothing acts on it when it does not (no controller reads that table).
   */
  probe() {
    const topic = commandTopic(this.config.prefix, PROBE_TABLE, "probe", this.operator);
    this.client.publish(topic, "{}", { qos: 1 }, (error) => {
      this.mayCommand = !error;
      document.body.dataset.mayCommand = this.mayCommand ? "yes" : "no";
      this.rights = this.mayCommand ? "may_command" : "read_only";
      this.drawRights();
      this.schedule();
    });
  }

  drawRights() {
    $("rights").textContent = this.rights ? this.t(this.rights) : "";
  }

  // ---- commands --------------------------------------------------------------------

  nextId() {
    this.sequence += 1;
    return `${this.operator}-${Date.now().toString(36)}-${this.sequence}`;
  }

  /**
   * Send an action's command. One from an alarm's button names that alarm (its refusal is
   * noted beside it); a bulk settle sends its `repeat` commands one after the other, each
   * after the reply to the one before, and says how it went in one reply line.
   */
  async act(table, action, alarm = null) {
    if (action.confirm && !(await confirmDialog(this.t("confirm_on", { table, what: action.confirm })))) return;
    const from = { alarm: alarm === null ? null : alarmKey(table, alarm.id) };
    if (!action.repeat || action.repeat <= 1) {
      await this.command(table, action.command, action.body, from);
      return;
    }
    const bulk = this.nextId();
    this.update(withBulk(this.state, bulk, table, action.command, action.repeat, from.alarm));
    for (let i = 0; i < action.repeat; i += 1) {
      const reply = await this.command(table, action.command, action.body, { ...from, bulk });
      if (reply === null) { // no answer in time: the rest are not sent
        this.update(withBulkOver(this.state, bulk, action.repeat - i - 1));
        return;
      }
    }
    this.update(withBulkOver(this.state, bulk));
  }

  /** Send one command; resolves with its reply entry (or null after REPLY_WAIT_MS). */
  command(table, name, body, from = {}) {
    const id = this.nextId();
    const prefix = this.config.prefix;
    this.update(withSent(this.state, id, table, name, from));
    const answered = new Promise((resolve) => {
      this.waiting.set(id, resolve);
      setTimeout(() => {
        if (this.waiting.delete(id)) resolve(null);
      }, REPLY_WAIT_MS);
    });
    const options = {
      qos: 1,
      properties: {
        responseTopic: replyTopic(prefix, table, this.operator),
        correlationData: new TextEncoder().encode(id),
      },
    };
    const payload = JSON.stringify({ ...body, id });
    this.client.publish(commandTopic(prefix, table, name, this.operator), payload, options, (error) => {
      if (!error) return;
      const why = error.code === 135 ? PIT.not_authorized : error.message;
      this.update(withSendError(this.state, id, why));
      const resolve = this.waiting.get(id);
      if (this.waiting.delete(id)) resolve({ ok: false });
    });
    return answered;
  }

  settleWaiting(topic, text) {
    const where = parseTopic(this.config.prefix, topic);
    if (where === null || !isReply(where.kind)) return;
    let body;
    try {
      body = JSON.parse(text);
    } catch {
      return;
    }
    const id = body && body.id !== undefined ? String(body.id) : null;
    const resolve = id === null ? undefined : this.waiting.get(id);
    if (resolve && this.waiting.delete(id)) resolve(body);
  }

  setLimits(table, card) {
    const figures = {};
    for (const bet of LIMIT_BETS) {
      figures[bet] = {
        min: card.limitInputs[bet].min.value,
        max: card.limitInputs[bet].max.value,
      };
    }
    const made = limitsBody(table, figures, this.operator, card.currency.value, Date.now() / 1000);
    const status = card.limitsStatus;
    if (made.error) {
      status.textContent = this.say(made.error);
      status.dataset.state = "error";
      return;
    }
    status.textContent = this.t("sending");
    status.dataset.state = "sending";
    const topic = `${this.config.prefix}/${table}/limits`;
    this.client.publish(topic, JSON.stringify(made.body), { qos: 1, retain: true }, (error) => {
      status.dataset.state = error ? "error" : "sent";
      status.textContent = error
        ? this.t("not_set", { why: error.code === 135 ? PIT.not_authorized : error.message })
        : this.t("limits_set");
      card.limitsDirty = false;
    });
  }

  // ---- drawing -----------------------------------------------------------------------

  update(next) {
    if (next === this.state) return;
    this.state = next;
    this.schedule();
  }

  schedule() {
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => {
      this.scheduled = false;
      this.draw();
    });
  }

  draw() {
    const names = tableNames(this.state);
    document.body.dataset.tables = String(names.length);
    if (this.view === null) this.drawFloor(names);
    else if (this.state.tables[this.view]) this.drawTable(this.view);
    this.drawQueue();
    this.drawCounts(names);
    this.drawRefused();
    this.drawReplies();
  }

  // ---- the floor: a tile per table, grouped by area --------------------------------

  drawFloor(names) {
    const box = $("floor");
    const groups = groupTables(names, this.areas);
    const labelled = groups.some((g) => g.name !== null);
    const order = [];
    for (const group of groups) {
      if (labelled) order.push(this.areaLabel(group));
      for (const name of group.tables) {
        if (!this.tiles.has(name)) this.tiles.set(name, this.newTile(name));
        this.drawTile(name);
        order.push(this.tiles.get(name).root);
      }
    }
    if (order.length !== box.children.length || order.some((node, i) => box.children[i] !== node)) {
      box.replaceChildren(...order);
    }
    this.fitFloor(groups.map((g) => ({ count: g.tables.length, labelled })));
  }

  areaLabel(group) {
    let label = this.areaLabels.get(group.name);
    if (!label) {
      const name = group.other ? this.t("other_area") : group.name;
      label = element("h3", { class: "area-label", "data-area": group.name, textContent: name });
      this.areaLabels.set(group.name, label);
    }
    return label;
  }

  /** The tiles as large as the room left on the screen lets them be, all of them in it. */
  fitFloor(groups) {
    const box = $("floor");
    const top = box.getBoundingClientRect().top + window.scrollY;
    const room = { width: box.clientWidth, height: window.innerHeight - top - FLOOR_MARGIN };
    const key = JSON.stringify([groups, room]);
    if (key === this.fitted) return;
    this.fitted = key;
    const fit = fitTiles(groups, room, TILE_GAP);
    box.style.setProperty("--columns", String(fit.columns));
    box.style.setProperty("--tile-width", `${fit.width}px`);
    box.style.setProperty("--tile-height", `${fit.height}px`);
    box.dataset.fits = String(fit.fits);
  }

  newTile(table) {
    const root = element("button", { type: "button", class: "tile", "data-table": table });
    root.addEventListener("click", () => this.openTable(table));
    return { root, key: "" };
  }

  drawTile(name) {
    const tile = this.tiles.get(name);
    try {
      this.drawTileFacts(name, this.state.tables[name], tile);
      delete tile.root.dataset.drawError;
    } catch (error) {
      this.drawError(tile.root, name, error);
      tile.key = "";
    }
  }

  drawTileFacts(table, state, tile) {
    const controller = state.controller || "unknown";
    const open = openAlarms(state);
    const holding = blockingAlarms(open).length;
    const shoe = state.shoe;
    const live = state.live;
    const shown = state.results.slice(-TILE_RESULTS);
    const results = shown.map((r) => (LETTER[r.winner] ? this.say(LETTER[r.winner]) : "?"));
    const limits = state.limits ? `${shortFigure(state.limits.banker.min)}–${shortFigure(state.limits.banker.max)}` : "";
    const needs = holding ? "hold" : open.length ? "alarm" : controller === "offline" ? "offline" : "";
    const newest = state.results[state.results.length - 1];
    const facts = [this.lang, newest && newest.round, controller, holding, open.length - holding, shoe && shoe.shoe, shoe && shoe.rounds, live && live.round,
      shoe && shoe.phase, results.join(""), limits, state.limits && state.limits.currency, needs, state.rejected];
    const key = JSON.stringify(facts);
    if (key === tile.key) return;
    tile.key = key;
    const root = tile.root;
    root.dataset.controller = controller;
    root.dataset.needs = needs;
    root.dataset.alarms = String(open.length);
    root.dataset.round = live ? String(live.round) : "";
    // what the tile knows of the rounds: the newest result's round, the letters it shows
    root.dataset.resultRound = newest ? String(newest.round) : "";
    root.dataset.results = shown.map((r) => WINNER_CODE[r.winner] || "?").join("");
    root.title = `${table}: ${this.say(LABELS[controller] || LABELS.unknown)}`
      + (open.length ? ` · ${open.map((a) => this.say(kindWords(a.kind))).join(", ")}` : "")
      + (limits ? ` · ${`${state.limits.currency || ""} ${limits}`.trim()}` : "");
    root.replaceChildren(element("span", { class: "tile-body" },
      element("span", { class: "tile-head" },
        element("b", { class: "tile-name", textContent: table }),
        element("i", { class: "dot", "data-controller": controller, title: this.say(LABELS[controller] || LABELS.unknown) }),
        element("span", { class: "tile-state", textContent: controller === "online" ? "" : this.say(LABELS[controller] || LABELS.unknown) })),
      element("span", { class: "tile-line", "data-fact": "shoe" },
        element("span", { class: "tile-shoe", textContent: `${this.t("tile_shoe", { n: shoe ? shoe.shoe : "–" })} · ` }),
        this.t("tile_round", { n: live ? live.round : shoe ? shoe.rounds : "–" }),
        shoe && shoe.phase === "closed" ? ` · ${this.t("tile_closed")}` : ""),
      element("span", { class: "tile-alarms", "data-fact": "alarms" },
        holding ? element("span", { class: "sev", "data-severity": "hold", title: this.t("tile_hold_title") },
          `● ${holding}`, element("span", { class: "sev-word", textContent: ` ${this.t("tile_hold")}` })) : null,
        open.length - holding ? element("span", { class: "sev", "data-severity": "notice", title: this.t("tile_other_title"), textContent: `▲ ${open.length - holding}` }) : null,
        open.length ? null : element("span", { class: "sev", "data-severity": "none", textContent: this.t("no_alarm") })),
      element("span", { class: "tile-results", "data-fact": "results" },
        ...shown.map((r, i) => element("i", { "data-winner": WINNER_CODE[r.winner] || "?", textContent: results[i] }))),
      element("span", { class: "tile-limits", "data-fact": "limits" },
        limits && state.limits.currency ? element("span", { class: "tile-currency", textContent: `${state.limits.currency} ` }) : null,
        limits || this.t("no_limits")),
    ));
  }

  // ---- the queue: every open alarm of the floor, oldest first ------------------------

  drawQueue() {
    const queue = floorQueue(this.state);
    const allowed = this.allowed();
    const key = [queue.map((q) => [q.table, q.alarm]), this.state.notes, allowed];
    $("queue-count").textContent = String(queue.length);
    document.body.dataset.queue = String(queue.length);
    if (this.queueKey && this.queueKey.every((part, i) => sameItems(part, key[i]))) return;
    this.queueKey = key;
    $("queue").replaceChildren(...queue.map(({ table, alarm }) => this.queueItem(table, alarm, allowed)));
    this.drawAges();
  }

  queueItem(table, alarm, allowed) {
    const opener = element("button", { type: "button", class: "queue-table", textContent: table, "data-open-table": table });
    opener.addEventListener("click", () => this.openTable(table));
    const blocking = blockingAlarms([alarm]).length > 0;
    return element("li", {
      class: "queue-item", "data-table": table, "data-alarm-id": String(alarm.id), "data-kind": alarm.kind,
      "data-key": alarmKey(table, alarm.id), "data-severity": blocking ? "hold" : "notice",
    },
    element("div", { class: "queue-head" }, opener,
      element("span", { class: "queue-sentence", textContent: this.say(alarmSentence(alarm)) }),
      element("span", { class: "age", "data-since": String(alarm.ts ?? "") })),
    this.alarmButtons(table, alarm, allowed),
    this.noteOf(table, alarm));
  }

  /** Every "open for" in the queue, from the alarms' times and the clock now. */
  drawAges() {
    const now = Date.now() / 1000;
    for (const age of $("queue").querySelectorAll(".age")) {
      const since = age.dataset.since === "" ? NaN : Number(age.dataset.since);
      const age_ = ageText(since, now);
      age.textContent = age_ ? this.say(age_) : "";
    }
  }

  /** The refusal beside an alarm, kept until it is settled or dismissed. */
  noteOf(table, alarm) {
    const key = alarmKey(table, alarm.id);
    const note = this.state.notes[key];
    if (!note) return null;
    const dismiss = element("button", { type: "button", class: "dismiss", textContent: "×", title: this.t("dismiss") });
    dismiss.addEventListener("click", () => this.update(withDismissed(this.state, key)));
    // a bulk settle's line is the console's (three texts); a reply's reason, the controller's
    const why = Array.isArray(note.text)
      ? element("span", { textContent: this.say(note.text) })
      : element("span", { lang: "en", textContent: wordsIn(note.text, this.lang) });
    const [before, after] = this.t("refused_note", { why: "\u0000" }).split("\u0000");
    return element("p", { class: "note", "data-note": key, role: "status" },
      element("span", { class: "note-text" }, before, why, after), dismiss);
  }

  drawCounts(names) {
    const needs = names.filter((n) => {
      const state = this.state.tables[n];
      return openAlarms(state).length || state.controller === "offline";
    }).length;
    const offline = names.filter((n) => this.state.tables[n].controller === "offline").length;
    $("floor-counts").textContent = this.t("floor_counts", { n: names.length, needs })
      + (offline ? this.t("floor_offline", { n: offline }) : "");
  }

  // ---- a table's own view ----------------------------------------------------------

  /** Open a table's view (from its tile or the queue): its card, and more of its topics. */
  openTable(table) {
    if (this.view === table) return;
    this.closeTable();
    this.view = table;
    this.card = this.newCard(table);
    $("table-card").replaceChildren(this.card.root);
    $("layout").dataset.view = "table";
    document.body.dataset.view = table;
    $("floor").hidden = true;
    $("table-view").hidden = false;
    if (this.client) {
      this.client.subscribe(tableTopic(this.config.prefix, table), this.subscription(TABLE_SUBSCRIPTION));
    }
    this.drawnReplies = null;
    this.schedule();
  }

  subscription(identifier) {
    return { qos: 1, properties: { subscriptionIdentifier: identifier } };
  }

  closeTable() {
    if (this.view === null) return;
    if (this.client) this.client.unsubscribe(tableTopic(this.config.prefix, this.view));
    this.view = null;
    this.card = null;
    $("table-card").replaceChildren();
    $("layout").dataset.view = "floor";
    document.body.dataset.view = "";
    $("floor").hidden = false;
    $("table-view").hidden = true;
    this.fitted = "";
    this.schedule();
  }

  /** The open table's card; one that cannot be drawn is marked and counted. */
  drawTable(name) {
    const card = this.card;
    try {
      this.drawCard(name, this.state.tables[name], card);
      delete card.root.dataset.drawError;
    } catch (error) {
      this.drawError(card.root, name, error);
      card.drawnKey = ""; // draw it all again next time
    }
  }

  drawError(root, name, error) {
    this.drawErrors = (this.drawErrors || 0) + 1;
    document.body.dataset.drawErrors = String(this.drawErrors);
    root.dataset.drawError = String(error && error.message ? error.message : error).slice(0, 120);
    console.error(`pit: cannot draw ${name}:`, error);
  }

  /** How many bodies were refused, in the header (window.pitRefused for tests). */
  drawRefused() {
    const count = refusedCount(this.state);
    window.pitRefused = count;
    const box = $("refused");
    box.hidden = count === 0;
    box.dataset.refused = String(count);
    box.textContent = count ? this.t("refused_count", { n: count }) : "";
  }

  allowed() {
    return this.mayCommand === true && this.link === "connected";
  }

  newCard(table) {
    const summary = element("dl", { class: "summary" });
    const alarms = element("div", { class: "alarms" });
    const actions = element("div", { class: "actions" });
    const board = element("a", {
      class: "board-link",
      href: `board/?table=${encodeURIComponent(table)}&prefix=${encodeURIComponent(this.config.prefix)}&view=pit`,
      target: "_blank",
      textContent: this.t("live_board"),
    });
    // A link, not a button: reading the history is not a command, open to every account.
    const history = element("a", {
      class: "history-link", href: "#", textContent: this.t("history"),
      title: this.t("history_link_title", { table }),
    });
    history.addEventListener("click", (event) => {
      event.preventDefault();
      this.showHistory(table);
    });
    const limitInputs = {};
    const limitRows = LIMIT_BETS.map((bet) => {
      limitInputs[bet] = {
        min: element("input", { inputMode: "numeric", "data-limit": `${bet}-min`, size: 7 }),
        max: element("input", { inputMode: "numeric", "data-limit": `${bet}-max`, size: 9 }),
      };
      return element("label", { class: "limit" }, `${this.say(betWords(bet))} `, limitInputs[bet].min, "–", limitInputs[bet].max);
    });
    const currency = element("input", { "data-limit": "currency", size: 4, placeholder: "HKD" });
    const limitsStatus = element("span", { class: "limits-status", "data-state": "" });
    const setButton = element("button", { type: "submit", textContent: this.t("set_limits"), "data-action": "limits" });
    const limitsForm = element(
      "form", { class: "limits-form" },
      element("span", { class: "caption", textContent: this.t("limits") }),
      ...limitRows, element("label", { class: "limit" }, `${this.t("currency")} `, currency), setButton, limitsStatus,
    );
    const card = {
      root: element(
        "section", { class: "table-card", "data-table": table },
        element("header", {}, element("h2", { textContent: table }),
          element("span", { class: "pill controller", "data-controller": "unknown" }), history, board),
        summary, alarms, actions, limitsForm,
      ),
      summary, alarms, actions, limitInputs, currency, limitsStatus, setButton,
      limitsDirty: false, drawnLimits: undefined, drawnAlarms: undefined, drawnKey: "",
    };
    limitsForm.addEventListener("input", () => {
      card.limitsDirty = true;
    });
    limitsForm.addEventListener("submit", (event) => {
      event.preventDefault();
      this.setLimits(table, card);
    });
    return card;
  }

  showHistory(table) {
    $("layout").hidden = true;
    this.history.open(table);
  }

  drawCard(table, state, card) {
    const root = card.root;
    const controller = state.controller || "unknown";
    root.dataset.controller = controller;
    const pill = root.querySelector(".pill.controller");
    pill.dataset.controller = controller;
    pill.textContent = controller === "online" || controller === "offline"
      ? this.say(LABELS[controller]) : this.t("no_status");
    const shoe = state.shoe;
    const live = state.live;
    const left = cardsLeft(state);
    const results = state.results.slice(-SHOWN_RESULTS);
    const phase = (name, key) => (PIT[`${name}_${key}`] ? this.t(`${name}_${key}`) : String(key).replaceAll("_", " "));
    const facts = [
      ["shoe", this.say(LABELS.shoe), shoe ? `${shoe.shoe} (${phase("phase", shoe.phase)})` : "–"],
      ["round", this.say(LABELS.round), live ? `${live.round} ${phase("round", live.status)}` : "–"],
      ["cards_left", this.say(LABELS.cards_left), left === null ? "–" : String(left)],
      ["demo", this.say(LABELS.demo), shoe && shoe.demo ? this.t("demo_on") : this.t("demo_off")],
      ["alarms", this.t("open_alarms_fact"), String(openAlarms(state).length)],
      ["results", this.t("last_results"), results.map((r) => (LETTER[r.winner] ? this.say(LETTER[r.winner]) : "?")).join(" ") || "–"],
      ["edge", this.t("player_edge"), edgeText((this.state.edges || {})[table], this.lang)],
    ];
    if (state.rejected) facts.push(["rejected", this.t("bad_bodies"), String(state.rejected)]);
    const key = JSON.stringify(facts);
    if (key !== card.drawnKey) {
      card.drawnKey = key;
      card.summary.replaceChildren(
        ...facts.map(([name, caption, value]) =>
          element("div", { "data-fact": name }, element("dt", { textContent: caption }), element("dd", { textContent: value }))),
      );
    }
    root.dataset.alarms = String(openAlarms(state).length);
    root.dataset.round = live ? String(live.round) : "";
    root.dataset.roundStatus = live ? live.status : "";
    const allowed = this.allowed();
    const rightsKey = `${allowed}`;
    if (state.alarms !== card.drawnAlarms || card.alarmsRights !== rightsKey || this.state.notes !== card.drawnNotes) {
      card.drawnAlarms = state.alarms;
      card.alarmsRights = rightsKey;
      card.drawnNotes = this.state.notes;
      card.alarms.replaceChildren(
        ...openAlarms(state).map((alarm) => this.alarmItem(table, alarm, allowed)),
        ...notices(state).slice(-SHOWN_NOTICES).map((alarm) => this.noticeItem(alarm)));
    }
    const actions = tableActions(state);
    const actionsKey = JSON.stringify([actions.map((a) => a.text), allowed, this.lang]);
    if (actionsKey !== card.actionsKey) {
      card.actionsKey = actionsKey;
      card.actions.replaceChildren(...actions.map((action) => this.button(table, action, allowed, action.key)));
    }
    card.setButton.disabled = !allowed;
    for (const inputs of Object.values(card.limitInputs)) {
      inputs.min.disabled = !allowed;
      inputs.max.disabled = !allowed;
    }
    card.currency.disabled = !allowed;
    if (state.limits !== card.drawnLimits && !card.limitsDirty) {
      card.drawnLimits = state.limits;
      for (const bet of LIMIT_BETS) {
        card.limitInputs[bet].min.value = state.limits ? String(state.limits[bet].min) : "";
        card.limitInputs[bet].max.value = state.limits ? String(state.limits[bet].max) : "";
      }
      card.currency.value = state.limits && state.limits.currency ? state.limits.currency : "";
    }
    root.dataset.limits = state.limits ? JSON.stringify(state.limits) : "";
  }

  alarmItem(table, alarm, allowed) {
    const hint = dealHint(alarm);
    const article = articleWords(alarm);
    return element(
      "article", {
        class: "alarm", "data-alarm-id": String(alarm.id), "data-kind": alarm.kind,
        "data-count": String(alarm.count || 1),
      },
      element("div", { class: "alarm-head" },
        element("b", { textContent: this.say(kindWords(alarm.kind)) }),
        article ? element("span", { class: "article", textContent: this.say(article) }) : null,
        alarm.round ? element("span", { textContent: this.t("in_round", { n: alarm.round }) }) : null,
        (alarm.count || 1) > 1 ? element("span", { class: "count", textContent: this.t("cards_count", { n: alarm.count }) }) : null),
      // the controller's own text, in English (the sentence above is in the page's language)
      element("p", { class: "alarm-text", lang: "en", textContent: alarm.text }),
      this.heldCards(alarm),
      hint ? element("p", { class: "hint", textContent: this.say(hint) }) : null,
      this.alarmButtons(table, alarm, allowed),
      this.noteOf(table, alarm),
    );
  }

  alarmButtons(table, alarm, allowed) {
    return element("div", { class: "alarm-actions" },
      ...alarmActions(alarm).map((action) =>
        this.button(table, action, allowed, action.bulk ? "bulk" : action.command, alarm)));
  }

  /** A one-off notice (shoe_refused ...): not open, nothing to settle; shown, not counted. */
  noticeItem(alarm) {
    return element("article", { class: "notice", "data-alarm-id": String(alarm.id), "data-kind": alarm.kind },
      element("b", { textContent: this.say(kindWords(alarm.kind)) }), " ",
      element("span", { lang: "en", textContent: alarm.text }));
  }

  /** The cards an alarm holds aside: how many, the codes folded away (there may be 86). */
  heldCards(alarm) {
    const cards = (alarm.cards && alarm.cards.length ? alarm.cards : alarm.card ? [alarm.card] : [])
      .map((c) => c || "unreadable");
    if (!cards.length) return null;
    const count = cards.length === 1 ? ALARM_WORDS.held_one : fillTexts(ALARM_WORDS.held, { n: cards.length });
    return element("details", { class: "alarm-cards", "data-held": String(cards.length) },
      element("summary", { textContent: this.say(count) }),
      element("span", { class: "card-codes", textContent: cards.join(" ") }));
  }

  say(texts) {
    return say(texts, this.lang);
  }

  button(table, action, allowed, key, alarm = null) {
    const button = element("button", {
      type: "button", textContent: this.say(action.text), disabled: !allowed,
      "data-action": key || action.command,
    });
    if (action.body && action.body.winner) button.dataset.winner = action.body.winner;
    button.title = allowed ? "" : this.t("may_not_command");
    button.addEventListener("click", () => this.act(table, action, alarm));
    return button;
  }

  /** The open table's replies, newest first (a bulk settle as one line). */
  drawReplies() {
    if (this.state.replies === this.drawnReplies) return;
    this.drawnReplies = this.state.replies;
    const mine = this.state.replies.filter((r) => r.table === this.view);
    const items = mine.reverse().map((reply) => {
      const outcome = reply.ok === null ? "pending" : reply.ok ? "ok" : "refused";
      // the console's words, or a refusal's reason: the controller's (or the broker's) own
      const text = reply.bulk
        ? this.say(bulkText(reply.bulk))
        : reply.ok === null ? this.t("waiting_reply") : reply.ok ? this.t("done") : null;
      const said = text === null
        ? (Array.isArray(reply.error)
          ? element("span", { textContent: this.say(reply.error) })
          : element("span", { lang: "en", textContent: wordsIn(reply.error, this.lang) }))
        : text;
      return element("li", {
        class: "reply", "data-id": reply.id, "data-table": reply.table,
        "data-command": reply.command, "data-ok": outcome,
      }, element("b", { textContent: `${reply.table} ${this.say(commandWords(reply.command))}: ` }), said);
    });
    $("replies").replaceChildren(...items);
  }
}

/** Fill the page's own labels in `lang`: data-pit-label (the text), data-pit-title, data-pit-aria. */
function applyPitLabels(doc, lang) {
  for (const node of doc.querySelectorAll("[data-pit-label]")) node.textContent = pitSay(node.dataset.pitLabel, {}, lang);
  for (const node of doc.querySelectorAll("[data-pit-title]")) node.title = pitSay(node.dataset.pitTitle, {}, lang);
  for (const node of doc.querySelectorAll("[data-pit-aria]")) node.setAttribute("aria-label", pitSay(node.dataset.pitAria, {}, lang));
  doc.title = pitSay("pit_console", {}, lang);
}

/** Whether two lists (or objects) hold the same items, each the same object. */
function sameItems(a, b) {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => sameItems(item, b[i]));
  }
  return false;
}

/** The floor's areas, [{name, tables}], from areas.json (baccarat pit --areas FILE); [] without. */
async function loadAreas() {
  try {
    const response = await fetch("areas.json", { cache: "no-store" });
    if (!response.ok) return [];
    const found = await response.json();
    return Array.isArray(found.areas) ? found.areas : [];
  } catch {
    return [];
  }
}

/** Ask in the page's own dialog; resolves true for "Yes". */
function confirmDialog(text) {
  const dialog = $("confirm");
  $("confirm-text").textContent = text;
  return new Promise((resolve) => {
    const done = (answer) => {
      $("confirm-yes").onclick = null;
      $("confirm-no").onclick = null;
      dialog.close();
      resolve(answer);
    };
    $("confirm-yes").onclick = () => done(true);
    $("confirm-no").onclick = () => done(false);
    dialog.showModal();
  });
}

async function main() {
  const config = await loadConfig();
  const pit = new PitConsole(config);
  pit.areas = await loadAreas();
  pit.start();
  document.body.dataset.ready = "true";
}

main();
