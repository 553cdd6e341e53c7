// What the result board shows, folded from the controller's messages. Pure: no DOM, no
// clock, no network. The same rules as the terminal board (src/baccarat/boards/state.py):
//
// * state topics (shoe, round, roads) only move forward by `seq`;
// * events apply by their natural key (a card by round and position, a result by
//   round_id, an alarm by id), so a second copy of a message changes nothing;
// * a late copy of an alarm already cleared, of a result already voided, or of a round
//   of an older shoe than the current one, is ignored;
// * a `seq` far below the highest seen means the controller restarted: start over;
// * a page opened late starts from the retained messages alone: `round` carries the cards
//   shown so far with the totals, `alarms` every open alarm. An `alarms` body replaces the
//   open alarms held, but not one heard of after it (a higher seq), nor a one-off notice
//   (`lasting` false), which no list names.
//
// `fold(state, message)` returns the same object when the message tells nothing new (and
// its seq is not above the highest seen).

import { LASTING } from "./alarm_kinds.js";

export const RECENT_RESULTS = 30;
export const REMEMBERED_IDS = 200;
export const SEQ_RESTART_GAP = 1000;

export function emptyState(table) {
  return {
    table,
    link: "connecting", // the page's own link to the broker
    controller: null, // the controller's status topic: "online" / "offline"
    shoe: null, // the last shoe message
    live: null, // the round on the table, card by card
    results: [], // recent counted results of the current shoe, oldest first
    alarms: [], // raised and not yet cleared, by id, each as last published
    alarmsSeq: 0, // the seq of the last `alarms` body taken
    roadsMessage: null,
    highestSeq: 0,
    messages: 0,
    rejected: 0, // bodies refused (boards/web/accept.js): counted, never folded
    refusedWhy: "", // the last refusal's reason
    clearedAlarms: [],
    voidedRounds: [],
    limits: null, // the table's betting limits (the pit's retained `limits` topic)
  };
}

export const LIMIT_BETS = ["banker", "player", "tie", "pairs"];

/** The limits of a `limits` body ({banker: {min, max}, ...}), or null if it is not one. */
export function parseLimits(message) {
  if (!message || message.type !== "limits") return null;
  const limits = {};
  for (const bet of LIMIT_BETS) {
    const figures = message[bet];
    if (!figures || !Number.isInteger(figures.min) || !Number.isInteger(figures.max)) return null;
    if (figures.min < 0 || figures.min > figures.max) return null;
    limits[bet] = { min: figures.min, max: figures.max };
  }
  const currency = typeof message.currency === "string" ? message.currency.slice(0, 8) : null;
  return { ...limits, currency };
}

/** The state after a body on the `limits` topic (retained: the last one holds; no seq). */
export function withLimits(state, message) {
  const limits = parseLimits(message);
  if (limits === null) return rejected(state);
  if (JSON.stringify(limits) === JSON.stringify(state.limits)) return state;
  return { ...state, limits };
}

/** The roads of the current shoe, or null (empty roads) before its first result. */
export function currentRoads(state) {
  const roads = state.roadsMessage;
  if (roads === null || (state.shoe !== null && roads.shoe !== state.shoe.shoe)) return null;
  return roads;
}

/**
 * Cards left in the current shoe, one figure for the header and the statistics: the newer
 * (by seq) of the shoe message's and the roads message's. The controller sends `shoe`
 * whenever the counts change and `roads` only when a result counts, so either can be
 * the newer one. null before either came.
 */
export function cardsLeft(state) {
  const shoe = state.shoe;
  const roads = currentRoads(state);
  if (roads !== null && roads.stats && (shoe === null || roads.seq > shoe.seq)) {
    return roads.stats.cards_left;
  }
  return shoe !== null ? shoe.cards_left : null;
}

/**
 * The alarms that hold play up until the pit settles them (they have corrections), and a
 * lasting one (a shoe link that is down: alarm_kinds.js LASTING, from the one alarm table):
 * what players are asked to wait for. Alarms that nothing settles
 * (bad data, a device fault, a card after the shoe ended, the demo limit, a damaged
 * journal) are never cleared and do not stop play: they are for the pit's view only.
 */
export function blockingAlarms(alarms) {
  return alarms.filter((a) => LASTING.has(a.kind) || (Array.isArray(a.corrections) && a.corrections.length > 0));
}

export function lastResult(state) {
  return state.results.length ? state.results[state.results.length - 1] : null;
}

export function withLink(state, link) {
  return state.link === link ? state : { ...state, link };
}

/** The state after a body on the controller's status topic. */
export function withControllerStatus(state, text) {
  let status = String(text).trim();
  try {
    const body = JSON.parse(status);
    if (body && typeof body.state === "string") status = body.state;
    else if (typeof body === "string") status = body;
  } catch {
    // a plain-text status: keep it as it is
  }
  status = status.slice(0, 40) || null;
  return state.controller === status ? state : { ...state, controller: status };
}

/** The state after a body that was refused (`why`: the reason, if known). */
export function rejected(state, why = "") {
  return { ...state, rejected: state.rejected + 1, refusedWhy: String(why) };
}

export function fold(state, message) {
  if (message.type === "limits") return withLimits(state, message);
  if (typeof message.seq !== "number" || typeof message.type !== "string") return rejected(state);
  if (message.seq + SEQ_RESTART_GAP < state.highestSeq) {
    state = {
      ...emptyState(state.table),
      link: state.link,
      controller: state.controller,
      rejected: state.rejected,
      refusedWhy: state.refusedWhy,
      limits: state.limits,
    };
  }
  const handler = HANDLERS[message.type];
  const next = handler ? handler(state, message) : state;
  const highestSeq = Math.max(next.highestSeq, message.seq);
  if (next === state) {
    // nothing new to draw, but the board has seen this far (tests and gap checks read it)
    return highestSeq === state.highestSeq ? state : { ...state, highestSeq };
  }
  return { ...next, highestSeq, messages: next.messages + 1 };
}

const HANDLERS = {
  shoe: onShoe,
  round: onRound,
  card: onCard,
  result: onResult,
  void: onVoid,
  alarm: onAlarm,
  alarm_cleared: onAlarmCleared,
  alarms: onAlarms,
  roads: onRoads,
  recall: onRecall,
};

function compareKeys(a, b) {
  return a[0] - b[0] || a[1] - b[1];
}

function liveKey(live) {
  return [live.shoe, live.round];
}

function newLive(shoe, round, fields = {}) {
  return {
    shoe,
    round,
    roundId: null,
    status: "open",
    demo: false,
    next: null,
    cards: [], // [position, code or null], in the order they came
    playerTotal: null,
    bankerTotal: null,
    result: null,
    roundSeq: 0,
    cardSeq: 0,
    ...fields,
  };
}

function onShoe(state, message) {
  const current = state.shoe;
  if (current !== null && message.seq <= current.seq) return state;
  if (current !== null && message.shoe !== current.shoe) {
    const live = state.live && state.live.shoe === message.shoe ? state.live : null;
    return { ...state, shoe: message, results: [], live };
  }
  return { ...state, shoe: message };
}

/** A late copy from a shoe older than the current one: nothing to show. */
function olderShoe(state, message) {
  return state.shoe !== null && message.shoe < state.shoe.shoe;
}

function onRound(state, message) {
  if (olderShoe(state, message)) return state;
  const key = [message.shoe, message.round];
  let live = state.live;
  if (live !== null && compareKeys(key, liveKey(live)) < 0) return state;
  if (live === null || compareKeys(key, liveKey(live)) > 0) {
    live = newLive(message.shoe, message.round);
  } else if (message.seq <= live.roundSeq) {
    return state;
  }
  const newer = message.seq > live.cardSeq;
  live = {
    ...live,
    roundId: message.round_id,
    status: live.status === "void" ? "void" : message.status,
    demo: message.demo,
    next: newer ? message.next : live.next,
    roundSeq: message.seq,
  };
  if (newer && Array.isArray(message.cards) && message.cards.length) {
    // the cards shown so far: what a page opened mid-round starts from
    live = {
      ...live,
      cards: message.cards.filter((c) => c.position !== "burn").map((c) => [c.position, c.card]),
      playerTotal: message.player_total,
      bankerTotal: message.banker_total,
      cardSeq: message.seq,
    };
  }
  return { ...state, live };
}

function onCard(state, message) {
  if (message.round === null || message.round === undefined) return state; // a shoe burn
  if (olderShoe(state, message)) return state;
  const key = [message.shoe, message.round];
  let live = state.live;
  if (live !== null && compareKeys(key, liveKey(live)) < 0) return state;
  if (live === null || compareKeys(key, liveKey(live)) > 0) {
    live = newLive(message.shoe, message.round, { demo: message.demo });
  }
  if (message.position === "burn" || live.cards.some(([p]) => p === message.position)) {
    return live === state.live ? state : { ...state, live };
  }
  live = { ...live, cards: [...live.cards, [message.position, message.card]] };
  if (message.seq > live.cardSeq) {
    live = {
      ...live,
      playerTotal: message.player_total,
      bankerTotal: message.banker_total,
      cardSeq: message.seq,
    };
  }
  return { ...state, live };
}

function onResult(state, message) {
  if (state.voidedRounds.includes(message.round_id) || olderShoe(state, message)) return state;
  const key = [message.shoe, message.round];
  let live = state.live;
  if (live !== null && compareKeys(key, liveKey(live)) === 0) {
    if (live.result === null || live.result.seq !== message.seq) {
      live = { ...live, result: message, status: "complete", roundId: message.round_id };
    }
  } else if (live === null || compareKeys(key, liveKey(live)) > 0) {
    live = newLive(message.shoe, message.round, {
      roundId: message.round_id,
      status: "complete",
      demo: message.demo,
      result: message,
      cards: cardsOfHands(message.player.cards, message.banker.cards),
      playerTotal: message.player.total,
      bankerTotal: message.banker.total,
    });
  }
  let results = state.results;
  const entry = resultEntry(message);
  if (counts(state, message) && !results.some((r) => r.roundId === message.round_id)) {
    results = [...results, entry]
      .sort((a, b) => a.shoe - b.shoe || a.round - b.round)
      .slice(-RECENT_RESULTS);
  }
  if (live === state.live && results === state.results) return state;
  return { ...state, live, results };
}

function resultEntry(message) {
  return {
    shoe: message.shoe,
    round: message.round,
    roundId: message.round_id,
    winner: message.winner,
    playerTotal: message.player.total,
    bankerTotal: message.banker.total,
    playerPair: message.player.pair,
    bankerPair: message.banker.pair,
    natural: message.player.natural || message.banker.natural,
    // EZ Baccarat's side bets and banker push: only where the table's profile has them
    // (sideBets null, bankerPush null elsewhere): {dragon7, panda8}, each present if dealt
    sideBets: message.side_bets ?? null,
    bankerPush: message.banker_push ?? null,
  };
}

function counts(state, result) {
  return !result.demo && (state.shoe === null || result.shoe >= state.shoe.shoe);
}

function cardsOfHands(player, banker) {
  return [
    ...player.map((card, i) => [`P${i + 1}`, card]),
    ...banker.map((card, i) => [`B${i + 1}`, card]),
  ];
}

function onVoid(state, message) {
  if (state.voidedRounds.includes(message.round_id)) return state;
  const voidedRounds = remember(state.voidedRounds, message.round_id);
  const results = state.results.filter((r) => r.roundId !== message.round_id);
  let live = state.live;
  if (live !== null && compareKeys([message.shoe, message.round], liveKey(live)) === 0) {
    live = { ...live, status: "void", result: null, next: null };
  }
  return { ...state, voidedRounds, results, live };
}

/** A new alarm, or a newer copy of an open one (a coalesced alarm's count changed). */
function onAlarm(state, message) {
  if (state.clearedAlarms.includes(message.id)) return state;
  const known = state.alarms.find((a) => a.id === message.id);
  if (known && message.seq <= known.seq) return state;
  return { ...state, alarms: byId([...state.alarms.filter((a) => a.id !== message.id), message]) };
}

/** Every open alarm as of the body's seq; what came after it stays as it is. */
function onAlarms(state, message) {
  if (message.seq < state.alarmsSeq || !Array.isArray(message.alarms)) return state;
  const listed = new Map();
  for (const alarm of message.alarms) {
    if (!state.clearedAlarms.includes(alarm.id)) listed.set(alarm.id, alarm);
  }
  const kept = [];
  for (const held of state.alarms) {
    const named = listed.get(held.id);
    if (named && held.seq > named.seq) listed.set(held.id, held);
    else if (!named && (held.seq > message.seq || !held.lasting)) kept.push(held);
  }
  const alarms = byId([...kept, ...listed.values()]);
  const same = alarms.length === state.alarms.length && alarms.every((a, i) => a === state.alarms[i]);
  if (same && message.seq === state.alarmsSeq) return state;
  return { ...state, alarms, alarmsSeq: message.seq };
}

function byId(alarms) {
  return alarms.sort((a, b) => a.id - b.id);
}

function onAlarmCleared(state, message) {
  if (state.clearedAlarms.includes(message.id)) return state;
  return {
    ...state,
    alarms: state.alarms.filter((a) => a.id !== message.id),
    clearedAlarms: remember(state.clearedAlarms, message.id),
  };
}

function onRoads(state, message) {
  const current = state.roadsMessage;
  if (current !== null && message.seq <= current.seq) return state;
  return { ...state, roadsMessage: message };
}

// Game recall (retained): lets a board that connects between rounds show the last round
// with its cards and the last result, which no retained card or result message carries.
function onRecall(state, message) {
  const rounds = message.rounds || [];
  const last = rounds[rounds.length - 1];
  if (!last) return state;
  let next = state;
  const key = [last.shoe, last.round];
  const live = state.live;
  const current = !olderShoe(state, last);
  const newer = current && (live === null || compareKeys(key, liveKey(live)) > 0);
  const sameButEmpty = live !== null && compareKeys(key, liveKey(live)) === 0 && !live.cards.length;
  if (newer || sameButEmpty) {
    const cards = last.cards.filter((c) => c.position !== "burn").map((c) => [c.position, c.card]);
    next = {
      ...next,
      live: newLive(last.shoe, last.round, {
        ...(sameButEmpty ? live : {}),
        roundId: last.round_id,
        status: last.status === "void" ? "void" : "complete",
        demo: last.demo,
        cards,
        playerTotal: last.player_total,
        bankerTotal: last.banker_total,
      }),
    };
  }
  if (!state.results.length) {
    const shoe = state.shoe ? state.shoe.shoe : last.shoe;
    const recalled = rounds
      .filter((r) => r.status === "result" && !r.demo && r.shoe === shoe)
      .map(recalledEntry)
      .slice(-RECENT_RESULTS);
    if (recalled.length) next = { ...next, results: recalled };
  }
  return next;
}

function recalledEntry(round) {
  const hand = (side) => round.cards.filter((c) => c.position.startsWith(side)).map((c) => c.card);
  const player = hand("P");
  const banker = hand("B");
  return {
    shoe: round.shoe,
    round: round.round,
    roundId: round.round_id,
    winner: round.winner,
    playerTotal: round.player_total,
    bankerTotal: round.banker_total,
    playerPair: isPair(player),
    bankerPair: isPair(banker),
    natural: isNatural(player) || isNatural(banker),
  };
}

/** The baccarat value of a card code such as "TS" (ten of spades): A=1, T/J/Q/K=0. */
export function cardValue(code) {
  const rank = code ? code[0] : "";
  if (rank === "A") return 1;
  if ("TJQK".includes(rank)) return 0;
  const value = Number(rank);
  return Number.isInteger(value) ? value : 0;
}

function isPair(cards) {
  return cards.length >= 2 && cards[0] && cards[1] && cards[0][0] === cards[1][0];
}

function isNatural(cards) {
  return cards.length >= 2 && (cardValue(cards[0]) + cardValue(cards[1])) % 10 >= 8;
}

function remember(list, item) {
  return [...list.slice(-(REMEMBERED_IDS - 1)), item];
}
