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
import { bodyText } from "./board/accept.js";
import { LABELS, LANGUAGE_ORDER, LANGUAGES } from "./board/labels.js";
import {
  alarmKey,
  bulkText,
  commandTopic,
  emptyConsole,
  floorTopics,
  FLOOR_SUBSCRIPTION,
  secondCopy,
  TABLE_SUBSCRIPTION,
  tableTopic,
  isReply,
  loginError,
  parseTopic,
  receive,
  refusedCount,
  replyTopic,
  tableNames,
  withBulk,
  withBulkOver,
  withSendError,
  withSent,
} from "./console.js";
import { $, element } from "./dom.js";
import { floorView } from "./floor_view.js";
import { HistoryView } from "./history.js";
import { PIT } from "./pit_labels.js";
import { tableView } from "./table_view.js";
import { commandWords, consoleLanguage, pitSay, say, wordsIn } from "./words.js";

const CONNECT_TIMEOUT_MS = 8000;
const RECONNECT_PERIOD_MS = 2000;
/** Seconds between pings when nothing else is sent: a quiet floor still hears the broker. */
const KEEPALIVE_S = 30;
/** No packet for this long (a ping's answer is one) and the link is not called connected. */
const SILENT_MS = (KEEPALIVE_S + 5) * 1000;
const REPLY_WAIT_MS = 10000;
const AGE_EVERY_MS = 1000;
/** Not a table: the permission probe's topic level (nothing subscribes to it). */
const PROBE_TABLE = "pit-console-probe";

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
      keepalive: KEEPALIVE_S,
    });
    this.client = client;
    let loggedIn = false;
    // "connected" only while packets come (messages, or the broker's answer to a ping)
    client.on("packetreceive", () => {
      this.lastPacket = performance.now();
      if (this.link === "silent") this.setLink("connected");
    });
    client.on("connect", () => {
      loggedIn = true;
      this.keepaliveLost = false;
      this.lastPacket = performance.now();
      this.watchLink();
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
        if (/keepalive/i.test(error.message)) {
          this.keepaliveLost = true; // said as what it is until connected again
          this.setLink("lost");
        }
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
      // measured before it is decoded: null, a body longer than its topic allows (accept.js)
      const where = parseTopic(this.config.prefix, topic);
      const text = where === null ? null : bodyText(where.kind, payload);
      this.update(receive(this.state, this.config.prefix, topic, text, payload.length));
      if (text !== null) this.settleWaiting(topic, text);
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
    if (this.linkTimer) clearInterval(this.linkTimer);
    this.linkTimer = null;
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
    const shown = link === "lost" && this.keepaliveLost ? "keepalive" : link;
    document.body.dataset.link = shown;
    $("link").dataset.link = shown;
    const words = { connected: LABELS.connected, lost: LABELS.lost, connecting: LABELS.connecting }[link];
    if (shown === "keepalive") $("link").textContent = this.t("link_keepalive");
    else if (link === "silent") {
      $("link").textContent = this.t("link_silent", { s: Math.round((performance.now() - this.lastPacket) / 1000) });
    } else $("link").textContent = words ? this.say(words) : "";
    this.schedule();
  }

  /** Every second: a link with no packet for SILENT_MS (a ping unanswered) is not "connected". */
  watchLink() {
    if (this.linkTimer) clearInterval(this.linkTimer);
    this.linkTimer = setInterval(() => {
      if (this.link === "connected" && performance.now() - this.lastPacket > SILENT_MS) this.setLink("silent");
    }, 1000);
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

  // the floor, its tiles and the queue: floor_view.js (floorView, below)

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


  showHistory(table) {
    $("layout").hidden = true;
    this.history.open(table);
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

// The floor, its queue and a table's view: methods of the console, in their own files.
Object.assign(PitConsole.prototype, floorView, tableView);

async function main() {
  const config = await loadConfig();
  const pit = new PitConsole(config);
  pit.areas = await loadAreas();
  pit.start();
  document.body.dataset.ready = "true";
}

main();
