// The floor and the queue of the pit console (pit.js): a tile per table, grouped by area
// and sized to fit the screen, and every open alarm of the floor, oldest first, with its
// buttons and the refusal kept beside it. Methods of the console (PitConsole), kept here
// and installed on it by pit.js: `this` is the console.

import { LABELS } from "./board/labels.js";
import { blockingAlarms } from "./board/state.js";
import {
  ageText,
  alarmKey,
  fitTiles,
  floorQueue,
  groupTables,
  openAlarms,
  shortFigure,
  withDismissed,
} from "./console.js";
import { $, element } from "./dom.js";
import { alarmSentence, kindWords, wordsIn } from "./words.js";

const TILE_RESULTS = 10;
const TILE_GAP = 4;
/** Room kept under the floor, in pixels (the layout's padding). */
const FLOOR_MARGIN = 12;
/** A result's letter on a tile and in a table's summary: B, P, T (莊, 閒, 和). */
export const LETTER = { banker: ["B", "莊", "庄"], player: ["P", "閒", "闲"], tie: ["T", "和", "和"] };
/** The tile's data-results: the letters in English whatever the language (for tests). */
export const WINNER_CODE = { banker: "B", player: "P", tie: "T" };

/** Whether two lists (or objects) hold the same items, each the same object. */
function sameItems(a, b) {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => sameItems(item, b[i]));
  }
  return false;
}

export const floorView = {
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
  },

  areaLabel(group) {
    let label = this.areaLabels.get(group.name);
    if (!label) {
      const name = group.other ? this.t("other_area") : group.name;
      label = element("h3", { class: "area-label", "data-area": group.name, textContent: name });
      this.areaLabels.set(group.name, label);
    }
    return label;
  },

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
  },

  newTile(table) {
    const root = element("button", { type: "button", class: "tile", "data-table": table });
    root.addEventListener("click", () => this.openTable(table));
    return { root, key: "" };
  },

  drawTile(name) {
    const tile = this.tiles.get(name);
    const state = this.state.tables[name];
    if (tile.key && tile.drawn === state) return; // nothing of this table changed (its state is immutable)
    tile.drawn = state;
    try {
      this.drawTileFacts(name, state, tile);
      delete tile.root.dataset.drawError;
    } catch (error) {
      this.drawError(tile.root, name, error);
      tile.key = "";
    }
  },

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
      shoe && shoe.phase, results.join(""), limits, state.limits && state.limits.currency, needs, state.rejected,
      state.flooding];
    const key = JSON.stringify(facts);
    if (key === tile.key) return;
    tile.key = key;
    const root = tile.root;
    root.dataset.controller = controller;
    root.dataset.needs = needs;
    root.dataset.alarms = String(open.length);
    root.dataset.flooding = state.flooding ? "yes" : ""; // its excess dropped (console.js)
    root.dataset.round = live ? String(live.round) : "";
    // what the tile knows of the rounds: the newest result's round, the letters it shows
    root.dataset.resultRound = newest ? String(newest.round) : "";
    root.dataset.results = shown.map((r) => WINNER_CODE[r.winner] || "?").join("");
    root.title = `${table}: ${this.say(LABELS[controller] || LABELS.unknown)}`
      + (open.length ? ` · ${open.map((a) => this.say(kindWords(a.kind))).join(", ")}` : "")
      + (limits ? ` · ${`${state.limits.currency || ""} ${limits}`.trim()}` : "")
      + (state.flooding ? ` · ${this.t("flooding", { n: state.flooding })}` : "");
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
  },

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
  },

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
  },

  /** Every "open for" in the queue, from the alarms' times and the clock now. */
  drawAges() {
    const now = Date.now() / 1000;
    for (const age of $("queue").querySelectorAll(".age")) {
      const since = age.dataset.since === "" ? NaN : Number(age.dataset.since);
      const age_ = ageText(since, now);
      age.textContent = age_ ? this.say(age_) : "";
    }
  },

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
  },

  drawCounts(names) {
    const needs = names.filter((n) => {
      const state = this.state.tables[n];
      return openAlarms(state).length || state.controller === "offline";
    }).length;
    const offline = names.filter((n) => this.state.tables[n].controller === "offline").length;
    $("floor-counts").textContent = this.t("floor_counts", { n: names.length, needs })
      + (offline ? this.t("floor_offline", { n: offline }) : "");
  },
};
