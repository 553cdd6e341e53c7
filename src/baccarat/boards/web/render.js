// Draws the board's state into the page. Every element a test or a board maker may read
// carries data-* attributes: road cells have data-col, data-row (0-based, as in the roads
// message) and data-winner or data-colour; statistics have data-stat.

import { ALARM_KINDS, TABLE_ALARMS } from "./alarm_kinds.js";
import { fill, label, LABELS, trilingual } from "./labels.js";
import {
  blockingAlarms,
  cardsLeft,
  cardValue,
  currentRoads,
  LIMIT_BETS,
  lastResult,
} from "./state.js";

const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
const RANKS = { T: "10" };
const LETTERS = { banker: ["B", "莊", "庄"], player: ["P", "閒", "闲"], tie: ["T", "和", "和"] };
const PIT_ALARMS_SHOWN = 1;
/** The header's compact forms (board.css .topbar.fit-N). */
const HEADER_FITS = 8;
const ROAD_IDS = {
  bead_plate: "bead-plate",
  big_road: "big-road",
  big_eye_boy: "big-eye-boy",
  small_road: "small-road",
  cockroach_pig: "cockroach-pig",
};
const STATS = [
  "banker",
  "player",
  "tie",
  "banker_pairs",
  "player_pairs",
  "naturals",
  "rounds",
  "longest_banker_streak",
  "longest_player_streak",
];

export class BoardView {
  /** `view`: "players" (the default: a short notice for alarms) or "pit" (the alarms). */
  constructor(doc, view = "players") {
    this.doc = doc;
    this.view = view;
    this.drawnRoads = undefined;
    this.drawnLimits = undefined;
    this.drawnLive = undefined;
    this.drawnAlarms = undefined;
    this.drawnOverlay = undefined;
  }

  /** Redraw what changed since the last call. `force` redraws the roads (after a resize). */
  render(state, force = false) {
    const body = this.doc.body;
    body.dataset.highestSeq = String(state.highestSeq);
    body.dataset.messages = String(state.messages);
    body.dataset.rejected = String(state.rejected);
    body.dataset.refusedWhy = state.refusedWhy || "";
    body.dataset.link = state.link;
    // Each part on its own: a part that cannot be drawn is counted (data-draw-errors) and
    // the others are still drawn, now and at the next frame.
    this.part("header", () => {
      this.header(state);
      this.fitHeader();
    });
    this.part("live", () => {
      if (force || state.live !== this.drawnLive) this.live(state);
    });
    this.part("last", () => this.lastResult(state));
    this.part("alarms", () => {
      if (state.alarms !== this.drawnAlarms) this.alarms(state);
    });
    this.part("roads", () => {
      const roads = currentRoads(state);
      if (force || roads !== this.drawnRoads) this.roads(roads, state);
      else this.cardsLeft(state);
    });
    this.part("overlay", () => this.overlay(state));
  }

  part(name, draw) {
    try {
      draw();
    } catch (error) {
      this.drawErrors = (this.drawErrors || 0) + 1;
      this.doc.body.dataset.drawErrors = String(this.drawErrors);
      console.error(`board: cannot draw ${name}:`, error);
    }
  }

  header(state) {
    const doc = this.doc;
    const name = doc.getElementById("table-name");
    name.textContent = state.table || "–";
    name.dataset.table = state.table || "";
    const shoe = state.shoe;
    const live = state.live;
    setText(doc.querySelector('[data-info="shoe"]'), shoe ? shoe.shoe : "–");
    setText(doc.querySelector('[data-info="round"]'), live ? live.round : "–");
    const left = cardsLeft(state);
    setText(doc.querySelector('[data-info="cards_left"]'), left === null ? "–" : left);
    const flag = doc.getElementById("shoe-flag");
    const flagKey = !shoe ? null : shoe.phase === "closed" ? "shuffle" : shoe.last_round ? "last_round" : null;
    flag.hidden = flagKey === null;
    flag.dataset.flag = flagKey || "";
    if (flagKey && flag.dataset.drawn !== flagKey) {
      // the short form (fit-4) where the header is short of room: "Last round"
      flag.replaceChildren(tag(doc, "full", label(doc, flagKey)), tag(doc, "short", label(doc, `${flagKey}_short`)));
      flag.dataset.drawn = flagKey;
    }
    this.limits(state.limits);
    this.pill("controller-status", "controller", controllerKey(state.controller));
    this.pill("link-status", "link", linkKey(state.link));
  }

  /** The table's limits in the header, per bet (hidden while the table has none). */
  limits(limits) {
    const box = this.doc.getElementById("limits");
    if (limits === this.drawnLimits) return;
    this.drawnLimits = limits;
    box.hidden = limits === null;
    if (limits === null) return;
    const doc = this.doc;
    const items = LIMIT_BETS.map((bet) => {
      const item = doc.createElement("div");
      item.dataset.limit = bet;
      item.dataset.min = String(limits[bet].min);
      item.dataset.max = String(limits[bet].max);
      const name = doc.createElement("dt");
      name.append(label(doc, bet === "pairs" ? "pairs" : bet));
      const figures = doc.createElement("dd");
      figures.append(
        tag(doc, "full", `${stake(limits[bet].min)}–${stake(limits[bet].max)}`),
        tag(doc, "short", `${shortStake(limits[bet].min)}–${shortStake(limits[bet].max)}`),
      );
      item.append(name, figures);
      return item;
    });
    const caption = doc.createElement("div");
    caption.className = "caption";
    caption.append(tag(doc, "limits-word", label(doc, "limits")));
    if (limits.currency) caption.append(` ${limits.currency}`);
    box.replaceChildren(caption, ...items);
  }

  pill(id, attribute, key) {
    const pill = this.doc.getElementById(id);
    if (pill.dataset[attribute] === key && pill.dataset.drawn) return;
    pill.dataset[attribute] = key;
    pill.dataset.drawn = "1";
    pill.querySelector(".value").replaceChildren(label(this.doc, key));
    pill.title = `${LABELS[pill.querySelector("[data-label]").dataset.label].join(" / ")}: ${LABELS[key].join(" / ")}`;
  }

  /**
   * The header in one row: the first of its compact forms (board.css, classes fit-1 ...
   * fit-HEADER_FITS, each step kept by the next) in which it is no wider than the screen.
   * Measured again whenever its text, the language or the screen's size changes.
   */
  fitHeader() {
    const bar = this.doc.querySelector(".topbar");
    const key = `${innerWidth}x${innerHeight} ${this.doc.body.className} ${bar.textContent}`;
    if (key === this.fittedHeader) return;
    this.fittedHeader = key;
    let level = 0;
    const show = () => {
      for (let step = 1; step <= HEADER_FITS; step += 1) bar.classList.toggle(`fit-${step}`, step <= level);
    };
    show();
    while (level < HEADER_FITS && bar.scrollWidth > bar.clientWidth + 1) {
      level += 1;
      show();
    }
    bar.dataset.fit = String(level);
  }

  live(state) {
    this.drawnLive = state.live;
    const doc = this.doc;
    const live = state.live;
    const section = doc.getElementById("live-round");
    section.dataset.status = live ? live.status : "none";
    section.dataset.round = live ? String(live.round) : "";
    section.dataset.next = live && live.next ? live.next : "";
    section.dataset.winner = live && live.result ? live.result.winner : "";
    setText(section.querySelector("[data-live-round]"), live ? `#${live.round}` : "");
    const flag = section.querySelector("[data-live-flag]");
    const flagKey = !live ? null : live.status === "void" ? "void" : live.demo ? "demo" : null;
    flag.replaceChildren(...(flagKey ? [label(doc, flagKey)] : []));
    flag.dataset.flag = flagKey || "";
    const cards = new Map(live ? live.cards : []);
    for (const slot of section.querySelectorAll(".slot")) {
      const position = slot.dataset.position;
      drawCard(doc, slot, cards.has(position), cards.get(position));
    }
    for (const side of ["player", "banker"]) {
      const total = liveTotal(live, side);
      const element = section.querySelector(`[data-total="${side}"]`);
      element.textContent = total === null ? "" : String(total);
      element.dataset.value = total === null ? "" : String(total);
    }
  }

  lastResult(state) {
    const result = lastResult(state);
    const section = this.doc.getElementById("last-result");
    const key = result ? result.roundId : "";
    if (section.dataset.roundId === key && section.dataset.drawn) return;
    section.dataset.drawn = "1";
    section.dataset.roundId = key;
    section.dataset.winner = result ? result.winner : "none";
    section.dataset.round = result ? String(result.round) : "";
    const name = section.querySelector(".result-name");
    const winnerKey = result ? `${result.winner === "tie" ? "tie_result" : `${result.winner}_wins`}` : "waiting";
    name.replaceChildren(label(this.doc, winnerKey));
    setText(section.querySelector('[data-score="player"]'), result ? result.playerTotal : "");
    setText(section.querySelector('[data-score="banker"]'), result ? result.bankerTotal : "");
    const badges = [];
    if (result && result.bankerPair) badges.push(["banker_pair", "banker"]);
    if (result && result.playerPair) badges.push(["player_pair", "player"]);
    if (result && result.natural) badges.push(["natural", "natural"]);
    const sideBets = (result && result.sideBets) || {};
    if (sideBets.dragon7) badges.push(["dragon7", "dragon7"]);
    if (sideBets.panda8) badges.push(["panda8", "panda8"]);
    if (result && result.bankerPush) badges.push(["banker_push", "banker"]);
    section.querySelector(".result-badges").replaceChildren(
      ...badges.map(([key, cls]) => {
        const badge = this.doc.createElement("span");
        badge.className = `badge ${cls}`;
        badge.dataset.badge = key;
        badge.append(label(this.doc, key));
        return badge;
      }),
    );
  }

  /** The players' notice, or in the pit's view the open alarms themselves. */
  alarms(state) {
    this.drawnAlarms = state.alarms;
    const banner = this.doc.getElementById("alarm-banner");
    const alarms = this.view === "pit" ? state.alarms : blockingAlarms(state.alarms);
    banner.hidden = alarms.length === 0;
    banner.dataset.alarms = String(alarms.length);
    banner.dataset.ids = alarms.map((a) => a.id).join(",");
    const latest = alarms.length ? alarms[alarms.length - 1] : null;
    banner.dataset.kind = latest ? latest.kind : "";
    const notice = !latest || this.view === "pit" ? "" : alarms.some((a) => TABLE_ALARMS.has(a.kind)) ? "table" : "round";
    banner.dataset.notice = notice;
    const body = banner.querySelector(".alarm-body");
    if (!latest) {
      body.replaceChildren();
    } else if (this.view === "pit") {
      body.replaceChildren(...this.pitAlarms(alarms));
    } else {
      const line = this.doc.createElement("div");
      line.className = "alarm-notice";
      line.append(label(this.doc, `notice_${notice}`));
      body.replaceChildren(line);
    }
  }

  /**
   * One alarm in full (kind, article, round, the controller's own text) and how many more:
   * the newest of those that hold play up until the pit settles them, else the newest.
   */
  pitAlarms(alarms) {
    const doc = this.doc;
    const blocking = blockingAlarms(alarms);
    const shown = (blocking.length ? blocking : alarms).slice(-PIT_ALARMS_SHOWN).reverse();
    const items = shown.map((alarm) => {
      const item = doc.createElement("div");
      item.className = "alarm-item";
      item.dataset.alarmId = String(alarm.id);
      item.dataset.count = String(alarm.count || 1);
      const head = doc.createElement("div");
      head.className = "alarm-head";
      const kind = doc.createElement("span");
      kind.className = "alarm-kind";
      kind.append(trilingual(doc, ALARM_KINDS[alarm.kind] || [alarm.kind]));
      head.append(kind);
      const article = alarm.article === "device" ? label(doc, "device_article") : trilingual(doc, fill("article", { a: alarm.article }));
      head.append(tag(doc, "alarm-article", article));
      if (alarm.round !== null && alarm.round !== undefined) {
        head.append(tag(doc, "alarm-round", trilingual(doc, fill("round_number", { n: alarm.round }))));
      }
      const text = doc.createElement("div");
      text.className = "alarm-text";
      text.textContent = alarm.text;
      item.append(head, text);
      return item;
    });
    const more = alarms.length - shown.length;
    if (more > 0) {
      const line = doc.createElement("div");
      line.className = "alarm-more";
      line.append(trilingual(doc, fill("more_alarms", { n: more })));
      items.push(line);
    }
    return items;
  }

  /** The full-screen notice: the controller is offline, or the board lost its broker. */
  overlay(state) {
    const reason = !state.table ? "" : state.controller === "offline" ? "offline" : state.link === "lost" ? "link" : "";
    if (reason === this.drawnOverlay) return;
    this.drawnOverlay = reason;
    const overlay = this.doc.getElementById("offline-overlay");
    overlay.hidden = reason === "";
    overlay.dataset.reason = reason;
    this.doc.body.dataset.overlay = reason;
    if (!reason) return;
    overlay.querySelector(".overlay-title").replaceChildren(label(this.doc, `${reason === "link" ? "link" : "offline"}_title`));
    overlay.querySelector(".overlay-text").replaceChildren(label(this.doc, `${reason === "link" ? "link" : "offline"}_text`));
  }

  roads(roads, state) {
    this.drawnRoads = roads;
    const doc = this.doc;
    drawRoad(doc, "bead_plate", roads && roads.bead_plate, beadCell);
    drawRoad(doc, "big_road", roads && roads.big_road, bigRoadCell);
    for (const name of ["big_eye_boy", "small_road", "cockroach_pig"]) {
      drawRoad(doc, name, roads && roads[name], derivedCell);
    }
    const bigRoad = doc.getElementById("big-road");
    const leading = roads && roads.big_road.cells.length === 0 ? roads.big_road.leading_ties : 0;
    bigRoad.dataset.leadingTies = String(roads ? roads.big_road.leading_ties : 0);
    if (leading) bigRoad.append(leadingTiesCell(doc, leading));
    this.ask(roads);
    this.stats(roads, state);
  }

  ask(roads) {
    for (const side of ["banker", "player"]) {
      const row = this.doc.querySelector(`[data-ask="${side}"]`);
      for (const mark of row.querySelectorAll("[data-ask-road]")) {
        const colour = roads ? roads.ask[side][mark.dataset.askRoad] : null;
        mark.dataset.colour = colour || "none";
      }
    }
  }

  /** The one cards-left figure, in the statistics as in the header (state.js cardsLeft). */
  cardsLeft(state) {
    const left = cardsLeft(state);
    setText(this.doc.querySelector('[data-stat="cards_left"]'), left === null ? "–" : left);
  }

  stats(roads, state) {
    const doc = this.doc;
    const stats = roads ? roads.stats : null;
    for (const key of STATS) {
      setText(doc.querySelector(`[data-stat="${key}"]`), stats ? stats[key] : 0);
    }
    this.cardsLeft(state);
    const streak = doc.querySelector('[data-stat="current_streak"]');
    const current = stats && stats.current_streak;
    streak.dataset.winner = current ? current.winner : "";
    streak.dataset.length = current ? String(current.length) : "0";
    streak.replaceChildren(
      ...(current ? [trilingual(doc, LETTERS[current.winner]), doc.createTextNode(` ${current.length}`)] : [doc.createTextNode("–")]),
    );
    const total = stats ? stats.banker + stats.player + stats.tie : 0;
    for (const side of ["banker", "player", "tie"]) {
      const share = doc.querySelector(`[data-share="${side}"]`);
      share.style.flexGrow = String(total ? stats[side] : 1);
    }
  }
}

function tag(doc, cls, content) {
  const span = doc.createElement("span");
  span.className = cls;
  span.append(content);
  return span;
}

/** A stake for the header: 50000 as "50,000". */
export function stake(amount) {
  return amount.toLocaleString("en-US");
}

/**
 * A stake in its short form, for a header short of room: 50000 as "50K", 2500 as "2.5K";
 * never rounded (1234567 stays "1,234,567").
 */
export function shortStake(amount) {
  for (const [size, unit] of [[1e9, "B"], [1e6, "M"], [1e3, "K"]]) {
    if (amount >= size && (amount * 100) % size === 0) return `${amount / size}${unit}`;
  }
  return stake(amount);
}

function setText(element, value) {
  const text = String(value);
  if (element.textContent !== text) element.textContent = text;
}

function controllerKey(status) {
  return status === "online" || status === "offline" ? status : "unknown";
}

function linkKey(link) {
  if (link === "connected" || link === "connecting") return link;
  return "lost";
}

function liveTotal(live, side) {
  if (!live || !live.cards.length) return null;
  const given = side === "player" ? live.playerTotal : live.bankerTotal;
  const letter = side === "player" ? "P" : "B";
  const cards = live.cards.filter(([p]) => p.startsWith(letter));
  if (!cards.length) return null;
  if (given !== null && given !== undefined) return given;
  if (cards.some(([, code]) => !code)) return null;
  return cards.reduce((sum, [, code]) => sum + cardValue(code), 0) % 10;
}

/** A card face in `slot`, a back for an unreadable card, or the empty slot. */
function drawCard(doc, slot, dealt, code) {
  const key = dealt ? code || "?" : "";
  if (slot.dataset.card === key && slot.dataset.drawn) return;
  slot.dataset.drawn = "1";
  slot.dataset.card = key;
  slot.replaceChildren();
  slot.className = slot.className.replace(/\s*(face|back|red|black|fresh)\b/g, "");
  if (!dealt) {
    const position = doc.createElement("span");
    position.className = "position";
    position.textContent = slot.dataset.position;
    slot.append(position);
    return;
  }
  if (!code) {
    slot.classList.add("back");
    slot.textContent = "?";
    return;
  }
  const rank = RANKS[code[0]] || code[0];
  const suit = SUITS[code[1]] || code[1];
  slot.classList.add("face", "fresh", code[1] === "H" || code[1] === "D" ? "red" : "black");
  for (const [cls, text] of [["corner top", `${rank}${suit}`], ["pip", suit], ["corner bottom", `${rank}${suit}`]]) {
    const span = doc.createElement("span");
    span.className = cls;
    span.textContent = text;
    slot.append(span);
  }
}

// ---- roads --------------------------------------------------------------------------

function drawRoad(doc, name, road, makeCell) {
  const grid = doc.getElementById(ROAD_IDS[name]);
  const width = road ? road.width : 0;
  const view = grid.parentElement;
  // the cell size in pixels, as laid out (the CSS computes it from the screen's height)
  const cell = parseFloat(getComputedStyle(grid).gridTemplateRows) || 24;
  const shown = Math.max(1, Math.floor(view.clientWidth / cell));
  // When the road is wider than the view, its latest columns are shown whole, with one
  // empty column after them; the earlier ones are still in the page, scrolled out.
  const first = Math.max(0, width + 1 - shown);
  grid.style.gridTemplateColumns = `repeat(${Math.max(width, first + shown) + 1}, var(--cell))`;
  grid.style.marginLeft = `${-first * cell}px`;
  grid.dataset.width = String(width);
  grid.dataset.firstShown = String(first);
  grid.dataset.cells = String(road ? road.cells.length : 0);
  const fragment = doc.createDocumentFragment();
  for (const data of road ? road.cells : []) {
    const element = makeCell(doc, data);
    element.dataset.col = String(data.col);
    element.dataset.row = String(data.row);
    element.style.gridColumn = String(data.col + 1);
    element.style.gridRow = String(data.row + 1);
    fragment.append(element);
  }
  grid.replaceChildren(fragment);
}

function beadCell(doc, data) {
  const element = doc.createElement("div");
  element.className = `cell bead ${data.winner}`;
  element.dataset.winner = data.winner;
  element.dataset.round = String(data.round);
  pairFlags(doc, element, data);
  element.dataset.natural = String(data.natural);
  if (data.natural) element.append(dot(doc, "natural-mark"));
  element.prepend(trilingual(doc, LETTERS[data.winner]));
  return element;
}

function bigRoadCell(doc, data) {
  const element = doc.createElement("div");
  element.className = `cell big ${data.winner}`;
  element.dataset.winner = data.winner;
  element.dataset.round = String(data.round);
  element.dataset.ties = String(data.ties);
  element.dataset.logicalCol = String(data.logical_col);
  element.dataset.logicalRow = String(data.logical_row);
  element.dataset.natural = String(data.natural);
  pairFlags(doc, element, data);
  if (data.ties > 0) {
    const slash = doc.createElement("i");
    slash.className = "tie-slash";
    element.append(slash);
  }
  if (data.ties > 1) {
    const count = doc.createElement("span");
    count.className = "tie-count";
    count.textContent = String(data.ties);
    element.append(count);
  }
  return element;
}

function leadingTiesCell(doc, ties) {
  const element = doc.createElement("div");
  element.className = "cell big leading-ties";
  element.dataset.leadingTies = String(ties);
  element.style.gridColumn = "1";
  element.style.gridRow = "1";
  const slash = doc.createElement("i");
  slash.className = "tie-slash";
  element.append(slash);
  if (ties > 1) {
    const count = doc.createElement("span");
    count.className = "tie-count";
    count.textContent = String(ties);
    element.append(count);
  }
  return element;
}

function derivedCell(doc, data) {
  const element = doc.createElement("div");
  element.className = `cell mark ${data.colour}`;
  element.dataset.colour = data.colour;
  element.dataset.round = String(data.round);
  return element;
}

function pairFlags(doc, element, data) {
  element.dataset.bankerPair = String(data.banker_pair);
  element.dataset.playerPair = String(data.player_pair);
  if (data.banker_pair) element.append(dot(doc, "pair banker-pair"));
  if (data.player_pair) element.append(dot(doc, "pair player-pair"));
}

function dot(doc, cls) {
  const element = doc.createElement("i");
  element.className = cls;
  return element;
}
