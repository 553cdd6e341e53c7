// What the pit console knows and may do, folded from every table's messages. Pure: no DOM,
// no network, no clock. Each table's state is the web board's own (../board/state.js,
// the same folding rules: seq, duplicates, restarts, retained alarms); the console adds
// the table list, the replies to the operator's commands and what each alarm allows.
// What it says (a button's text, a refusal of wrong limits, a bulk settle's line, an
// age) is a label's three texts (pit_labels.js PIT, filled): the page picks the language.

import { receiveBody } from "./board/accept.js";
import { fillTexts, LABELS } from "./board/labels.js";
import { emptyState } from "./board/state.js";
import { advantages, withEdge } from "./edge.js";
import { PIT } from "./pit_labels.js";

/** The three texts of the console's label `key`, filled from `values`. */
function texts(key, values = {}) {
  return fillTexts(PIT[key], values);
}

/** The largest figure a limit may have (messages/limits.py MAX_STAKE). */
export const MAX_STAKE = 10 ** 12;
export const LIMIT_BETS = ["banker", "player", "tie", "pairs"];
export const WINNERS = ["banker", "player", "tie"];
/** Replies kept for the page, newest last. */
export const REPLIES_KEPT = 50;

/** {table, kind} of a topic under {prefix}/, or null if it is not a table's. */
export function parseTopic(prefix, topic) {
  if (!topic.startsWith(`${prefix}/`)) return null;
  const rest = topic.slice(prefix.length + 1);
  const slash = rest.indexOf("/");
  if (slash <= 0) return null;
  return { table: rest.slice(0, slash), kind: rest.slice(slash + 1) };
}

/**
 * Replies come on the response topic the command named ({prefix}/{table}/reply/{operator})
 * or, from a controller that does not take response topics (MQTT 3.1.1), on
 * {prefix}/{table}/reply: both are read, and a reply counts only for a command this page
 * sent (by its id).
 */
export function isReply(kind) {
  return kind === "reply" || kind.startsWith("reply/");
}

/**
 * The console's state: tables by name (each a board state), replies (newest last, a bulk
 * settle as one), sent commands waiting for their reply (by request id), and the notes:
 * the newest refusal of a command sent from an alarm's button, by alarm key (alarmKey()),
 * kept beside that alarm until it is settled or the operator dismisses it.
 */
export function emptyConsole() {
  return { tables: {}, replies: [], pending: {}, notes: {}, edges: {}, flow: new Map() };
}

/** Messages a table may send in one second; a dealing table sends a few, a result a dozen. */
export const FLOOD_PER_SECOND = 60;

/**
 * Whether this message of `table` is taken: a table that sends more than FLOOD_PER_SECOND
 * in a second floods, and the rest of that second is dropped and counted, so that the
 * other tables keep up. The table's state says so (`flooding`: how many were dropped),
 * until a second of it passes within the limit; each dropped one also counts as refused. `flow` counts per table, outside the
 * drawn state (a Map carried along).
 */
function admitted(console_, table, now) {
  const flow = console_.flow || (console_.flow = new Map());
  const second = Math.floor(now / 1000);
  let rate = flow.get(table);
  if (rate === undefined || rate.second !== second) {
    const calm = rate !== undefined && rate.n <= FLOOD_PER_SECOND;
    rate = { second, n: 0, calm };
    flow.set(table, rate);
  }
  rate.n += 1;
  const state = console_.tables[table];
  if (rate.n <= FLOOD_PER_SECOND) {
    if (state && state.flooding && rate.calm) {
      return { console_: { ...console_, tables: { ...console_.tables, [table]: { ...state, flooding: 0 } } }, admit: true };
    }
    return { console_, admit: true };
  }
  const before = state || emptyState(table);
  // dropped unread: counted among the table's refused bodies too
  const marked = { ...before, flooding: (before.flooding || 0) + 1, rejected: before.rejected + 1 };
  return { console_: { ...console_, tables: { ...console_.tables, [table]: marked } }, admit: false };
}

/** The key of a table's alarm in the console: "T07#12". */
export function alarmKey(table, id) {
  return `${table}#${id}`;
}

/** The alarms a table has open: a one-off notice (`lasting` false: shoe_refused) is not. */
export function openAlarms(state) {
  return state.alarms.filter((a) => a.lasting !== false);
}

/** The one-off notices a table had (not open: nothing settles them). */
export function notices(state) {
  return state.alarms.filter((a) => a.lasting === false);
}

/**
 * The console after one message on a table's topic (`text` is its body as text, `bytes`
 * its length in bytes; `text` null: a body longer than its topic allows, counted refused;
 * a table over FLOOD_PER_SECOND messages a second has the rest dropped and is marked).
 */
export function receive(console_, prefix, topic, text, bytes = text === null ? 0 : text.length, now = Date.now()) {
  const where = parseTopic(prefix, topic);
  if (where === null) return console_;
  const { table, kind } = where;
  if (kind.startsWith("cmd/")) return console_;
  const flow = admitted(console_, table, now);
  if (!flow.admit) return flow.console_; // a flood: dropped, counted on the table
  console_ = flow.console_;
  if (isReply(kind)) return text === null ? console_ : withReply(console_, table, text);
  if (text === "") return console_; // a retained body cleared
  const before = console_.tables[table] || emptyState(table);
  if (kind === "edge" && text !== null) return withEdgeOf(console_, table, before, text, bytes);
  // checked against its topic before it is folded (the board's accept.js): a body of
  // another type, or with fields not of its schema, is counted on the table, never shown
  const after = receiveBody(before, kind, text, table, bytes);
  if (after === before && console_.tables[table]) return console_;
  const next = { ...console_, tables: { ...console_.tables, [table]: after } };
  return after.alarms === before.alarms ? next : withoutSettledNotes(next, table);
}

/** The live edge of a table kept (edge.js); a refused body counts on the table. */
function withEdgeOf(console_, table, state, text, bytes) {
  const { edges, refused } = withEdge(console_.edges || {}, table, text, bytes);
  if (refused === undefined) return edges === console_.edges ? console_ : { ...console_, edges };
  const counted = { ...state, rejected: state.rejected + 1, refusedWhy: refused };
  return { ...console_, tables: { ...console_.tables, [table]: counted } };
}

/** Notes of `table`'s alarms that are no longer open are dropped: the alarm was settled. */
function withoutSettledNotes(console_, table) {
  const open = new Set(openAlarms(console_.tables[table]).map((a) => alarmKey(table, a.id)));
  const gone = Object.keys(console_.notes).filter((k) => k.startsWith(`${table}#`) && !open.has(k));
  if (!gone.length) return console_;
  const notes = { ...console_.notes };
  for (const key of gone) delete notes[key];
  return { ...console_, notes };
}

/** The note beside an alarm dismissed by the operator. */
export function withDismissed(console_, key) {
  if (!(key in console_.notes)) return console_;
  const notes = { ...console_.notes };
  delete notes[key];
  return { ...console_, notes };
}

/** Bodies refused on every table's topics, all told. */
export function refusedCount(console_) {
  return Object.values(console_.tables).reduce((sum, table) => sum + table.rejected, 0);
}

/** The table names, sorted as people read them (T2 before T10). */
export function tableNames(console_) {
  return Object.keys(console_.tables).sort(byName);
}

export function byName(a, b) {
  return a.localeCompare(b, "en", { numeric: true });
}

/**
 * A command the operator sent, waiting for its reply (by its request id). `from` names
 * the alarm whose button sent it (its key) and the bulk settle it is one of (`bulk`: that
 * settle's reply id): a bulk's commands have one reply line between them.
 */
export function withSent(console_, id, table, command, from = {}) {
  const alarm = from.alarm || null;
  const bulk = from.bulk || null;
  const pending = { ...console_.pending, [id]: { table, command, alarm, bulk } };
  if (bulk) return { ...console_, pending };
  const replies = [...console_.replies, { id, table, command, alarm, ok: null, error: null }];
  return { ...console_, pending, replies: replies.slice(-REPLIES_KEPT) };
}

/** A bulk settle begins: `total` commands, one reply line for them all. */
export function withBulk(console_, id, table, command, total, alarm) {
  const bulk = { total, done: 0, refused: 0, unsent: 0, firstError: null, over: false };
  const replies = [...console_.replies, { id, table, command, alarm, ok: null, error: null, bulk }];
  return { ...console_, replies: replies.slice(-REPLIES_KEPT) };
}

/** The bulk settle is over: every command answered, or `unsent` of them never sent. */
export function withBulkOver(console_, id, unsent = 0) {
  const entry = console_.replies.find((r) => r.id === id);
  if (!entry || !entry.bulk) return console_;
  const bulk = { ...entry.bulk, unsent, over: true };
  const ok = bulk.refused === 0 && unsent === 0;
  const next = replaceReply(console_, id, { bulk, ok, error: ok ? null : bulkText(bulk)[0] });
  return ok || !entry.alarm ? next : withNote(next, entry.alarm, id, bulkText(bulk));
}

/**
 * What a bulk settle says, three texts: "burned 86 cards", "burned 80, 6 refused: <first
 * reason>" (the reason is the controller's own text).
 */
export function bulkText(bulk) {
  if (!bulk.over) return texts("burning_of", { n: bulk.done + bulk.refused, total: bulk.total });
  if (!bulk.refused && !bulk.unsent) {
    return bulk.done === 1 ? texts("burned_one") : texts("burned_cards", { n: bulk.done });
  }
  const parts = [texts("burned_some", { n: bulk.done })];
  if (bulk.refused) parts.push(texts("bulk_refused", { n: bulk.refused, why: bulk.firstError }));
  if (bulk.unsent) parts.push(texts("bulk_unsent", { n: bulk.unsent }));
  return PIT.list_joint.map((joint, i) => parts.map((part) => part[i]).join(joint));
}

/** A command the broker refused (its PUBACK reason code) or that could not be sent. */
export function withSendError(console_, id, error) {
  return answered(console_, id, false, error);
}

function withReply(console_, table, text) {
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    return console_;
  }
  if (!body || body.type !== "reply" || body.id === undefined) return console_;
  const id = String(body.id);
  if (!(id in console_.pending)) return console_; // another console's, or an old one
  if (console_.pending[id].table !== table) return console_; // not where it was sent
  return answered(console_, id, body.ok === true, body.ok ? null : String(body.error || "refused"));
}

/** A command answered: its reply line (or its bulk's counts), and a refusal's note. */
function answered(console_, id, ok, error) {
  const sent = console_.pending[id];
  if (!sent) return console_;
  const pending = { ...console_.pending };
  delete pending[id];
  let next = { ...console_, pending };
  if (sent.bulk) {
    const entry = next.replies.find((r) => r.id === sent.bulk);
    if (!entry) return next;
    const bulk = {
      ...entry.bulk,
      done: entry.bulk.done + (ok ? 1 : 0),
      refused: entry.bulk.refused + (ok ? 0 : 1),
      firstError: entry.bulk.firstError || (ok ? null : error),
    };
    return replaceReply(next, sent.bulk, { bulk });
  }
  next = replaceReply(next, id, { ok, error });
  return ok || !sent.alarm ? next : withNote(next, sent.alarm, id, error);
}

function withNote(console_, key, id, text) {
  return { ...console_, notes: { ...console_.notes, [key]: { id, text } } };
}

function replaceReply(console_, id, fields) {
  const replies = console_.replies.map((r) => (r.id === id ? { ...r, ...fields } : r));
  return { ...console_, replies };
}

/**
 * The buttons an open alarm allows: {command, body, text, confirm?} each (text and confirm
 * three texts). `deal` is no command (the missing card comes from the shoe): it is shown
 * as a hint, never a button.
 */
export function alarmActions(alarm) {
  const actions = [];
  const corrections = Array.isArray(alarm.corrections) ? alarm.corrections : [];
  // this alarm's card, not the oldest card any alarm holds (another may hold an older one)
  const burn = Number.isInteger(alarm.id) && alarm.id > 0 ? { alarm: alarm.id } : {};
  for (const correction of corrections) {
    if (correction === "accept_as_burn") {
      actions.push({ command: "accept_as_burn", body: burn, text: texts("accept_as_burn") });
      if ((alarm.count || 1) > 1) {
        actions.push({
          command: "accept_as_burn",
          body: burn,
          text: texts("accept_all", { n: alarm.count }),
          repeat: alarm.count,
          bulk: true,
        });
      }
    } else if (correction === "void") {
      actions.push(voidAction(alarm.round, `settles ${alarm.kind}`));
    } else if (correction === "declare") {
      for (const winner of WINNERS) {
        actions.push({ command: "declare", body: { winner }, text: declareText(winner) });
      }
    } else if (correction === "burn") {
      actions.push({ command: "burn", body: { count: 1 }, text: texts("burn_a_card") });
    } else if (correction === "open") {
      actions.push({ command: "open", body: {}, text: texts("open_the_round") });
    }
  }
  return actions;
}

/** "Declare banker", in three texts. */
function declareText(winner) {
  return texts("declare", { winner: LABELS[winner].map((name) => name.toLowerCase()) });
}

/**
 * Void the round (a confirmation first: a void whose result was published leaves the
 * roads). The reason sent is for the journal, in English: `why` is a kind or "operator".
 */
export function voidAction(round, why) {
  const which = round ? texts("in_round", { n: round }) : PIT.the_round;
  return {
    command: "void",
    body: { confirm: true, reason: `pit console: ${why}` },
    text: PIT.void,
    confirm: texts("void_confirm", { round: which }),
  };
}

/** What `deal` asks for, if the alarm allows it: three texts, no button; null if not. */
export function dealHint(alarm) {
  return Array.isArray(alarm.corrections) && alarm.corrections.includes("deal")
    ? PIT.deal_hint
    : null;
}

/** The table's own buttons: new shoe, end shoe, demo on/off, burn, declare, open, void. */
export function tableActions(state) {
  const shoe = state.shoe;
  const demoOn = !!(shoe && shoe.demo);
  const live = state.live;
  return [
    { command: "shoe", body: {}, text: PIT.new_shoe, key: "shoe" },
    { command: "end", body: {}, text: PIT.end_shoe, key: "end", confirm: PIT.end_shoe_confirm },
    { command: "demo", body: { on: !demoOn }, text: demoOn ? PIT.demo_turn_off : PIT.demo_turn_on, key: "demo" },
    { command: "burn", body: { count: 1 }, text: PIT.burn, key: "burn" },
    { command: "open", body: {}, text: PIT.open_round, key: "open" },
    ...WINNERS.map((winner) => ({
      command: "declare",
      body: { winner },
      text: declareText(winner),
      key: `declare-${winner}`,
    })),
    { ...voidAction(live ? live.round : null, "operator"), key: "void" },
  ];
}

/** A bet's name in three texts, as the limits form shows it: "banker", "pairs". */
export function betWords(bet) {
  return (LABELS[bet === "pairs" ? "pairs" : bet]).map((name) => name.toLowerCase());
}

/**
 * The retained limits body for `table` from the form's figures ({banker: {min, max}, ...},
 * texts as typed), or {error} saying which figure is wrong (three texts).
 */
export function limitsBody(table, figures, operator, currency, ts) {
  const body = { schema: 1, type: "limits", table };
  for (const bet of LIMIT_BETS) {
    const parsed = {};
    for (const end of ["min", "max"]) {
      const text = String((figures[bet] || {})[end] ?? "").trim();
      const where = { bet: betWords(bet), end: PIT[`limit_${end}`] };
      if (!/^\d+$/.test(text)) return { error: texts("not_whole", { ...where, text }) };
      const value = Number(text);
      if (value > MAX_STAKE) return { error: texts("at_most", { ...where, n: MAX_STAKE }) };
      parsed[end] = value;
    }
    if (parsed.max < 1) return { error: texts("at_least_one", { bet: betWords(bet) }) };
    if (parsed.min > parsed.max) {
      return { error: texts("min_above_max", { bet: betWords(bet), min: parsed.min, max: parsed.max }) };
    }
    body[bet] = parsed;
  }
  const code = String(currency || "").trim();
  if (code && !/^[A-Z]{3}$/.test(code)) return { error: texts("bad_currency", { text: code }) };
  body.currency = code || null;
  body.by = operator;
  body.ts = ts;
  return { body };
}

export function commandTopic(prefix, table, command, operator) {
  return `${prefix}/${table}/cmd/${command}/${operator}`;
}

export function replyTopic(prefix, table, operator) {
  return `${prefix}/${table}/reply/${operator}`;
}

/** The page's words for a CONNACK refusal (MQTT 5 reason codes), or the error's own: three texts. */
export function loginError(error) {
  const code = error && error.code;
  if (code === 134 || code === 135 || code === 4 || code === 5) return PIT.wrong_login;
  if (code === 136 || code === 3) return PIT.broker_unavailable;
  return texts("cannot_log_in", { why: (error && error.message) || error });
}

// ---- the floor view -----------------------------------------------------------------

/**
 * What a tile needs, per table: the topics the floor subscribes to with a wildcard for
 * the table (`{prefix}/+/status`, ...). A table's own view subscribes to `{prefix}/{table}/#`
 * (its round, roads, cards ...) while it is open. `alarm` carries the one-off notices and
 * the settling of an alarm at once; `alarms` (retained) every open one.
 */
export const TILE_TOPICS = ["status", "shoe", "alarms", "alarm", "result", "limits"];

/** The floor's subscriptions: the tiles' topics of every table, and the replies. */
export function floorTopics(prefix, operator) {
  return [
    ...TILE_TOPICS.map((topic) => `${prefix}/+/${topic}`),
    `${prefix}/+/reply/${operator}`,
    `${prefix}/+/reply`,
  ];
}

/** MQTT 5 subscription identifiers: the floor's wildcards, and the open table's `#`. */
export const FLOOR_SUBSCRIPTION = 1;
export const TABLE_SUBSCRIPTION = 2;

/**
 * Whether a message is a second copy: the broker sends one per matching subscription, so
 * a tile's topic of the open table comes through both; the table's own copy is dropped
 * (a refused body would be counted twice).
 */
export function secondCopy(prefix, topic, identifiers) {
  const ids = Array.isArray(identifiers) ? identifiers : identifiers === undefined ? [] : [identifiers];
  if (!ids.includes(TABLE_SUBSCRIPTION) || ids.includes(FLOOR_SUBSCRIPTION)) return false;
  const where = parseTopic(prefix, topic);
  return where !== null && (TILE_TOPICS.includes(where.kind) || isReply(where.kind));
}

/** A table's own view subscribes to everything of the table while it is open. */
export function tableTopic(prefix, table) {
  return `${prefix}/${table}/#`;
}

/**
 * The tables grouped by area: [{name, tables}], in the areas file's order, the tables of
 * an area sorted by name; a table no area names is under "Other" (last). Without areas,
 * one group with no name.
 */
export function groupTables(names, areas) {
  if (!Array.isArray(areas) || !areas.length) return [{ name: null, tables: [...names] }];
  const areaOf = new Map();
  for (const area of areas) for (const table of area.tables) areaOf.set(table, area.name);
  const groups = areas.map((area) => ({ name: area.name, tables: [] }));
  const other = { name: "Other", other: true, tables: [] }; // its label in the page's language
  for (const table of names) {
    const found = areaOf.has(table) ? groups.find((g) => g.name === areaOf.get(table)) : other;
    found.tables.push(table);
  }
  return [...groups, other].filter((g) => g.tables.length);
}

/**
 * The largest tiles that fit `groups` (their sizes) in a box of width x height: each
 * named group starts a row with its label, a cell of its own. {columns, width, height,
 * fits}: tiles no smaller than min (a tile under 70 px high shows its facts in three
 * lines: pit.css); when even those do not fit, the most columns of them, and fits false
 * (the floor scrolls).
 */
export function fitTiles(
  groups, box, gap = 4, min = { width: 84, height: 40 }, max = { width: 240, height: 132 }, aspect = 1.6,
) {
  const cells = groups.map((g) => g.count + (g.labelled ? 1 : 0));
  const most = Math.max(1, Math.floor((box.width + gap) / (min.width + gap)));
  let best = null;
  for (let columns = 1; columns <= most; columns += 1) {
    const rows = cells.reduce((sum, n) => sum + Math.ceil(n / columns), 0);
    const width = Math.min(max.width, Math.floor((box.width - (columns - 1) * gap) / columns));
    const height = Math.min(max.height, Math.floor((box.height - (rows - 1) * gap) / Math.max(rows, 1)));
    if (width < min.width || height < min.height) continue;
    const tileHeight = Math.min(height, Math.floor(width / aspect) + 24);
    const score = Math.min(width / aspect, tileHeight);
    // the same size with more columns: the tiles stay in fewer rows
    if (best === null || score >= best.score) best = { columns, width, height: tileHeight, fits: true, score };
  }
  if (best === null) return { columns: most, width: min.width, height: min.height, fits: false };
  return { columns: best.columns, width: best.width, height: best.height, fits: true };
}

/**
 * Every open alarm of the floor, and every advantage notice that stands (edge.js), oldest
 * first (by its time, then table and id): [{table, alarm}].
 */
export function floorQueue(console_) {
  const queue = [];
  for (const [table, state] of Object.entries(console_.tables)) {
    for (const alarm of [...openAlarms(state), ...advantages(state)]) queue.push({ table, alarm });
  }
  return queue.sort((a, b) =>
    (a.alarm.ts ?? Infinity) - (b.alarm.ts ?? Infinity) || byName(a.table, b.table) || a.alarm.id - b.alarm.id);
}

/**
 * How long an alarm has been open, from its time and now (Unix seconds), three texts:
 * "4 min", "2 h 5 min"; null without a time.
 */
export function ageText(since, now) {
  if (typeof since !== "number" || !Number.isFinite(since)) return null;
  const seconds = Math.max(0, Math.floor(now - since));
  if (seconds < 60) return texts("age_seconds", { n: seconds });
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return texts("age_minutes", { n: minutes });
  return texts("age_hours", { h: Math.floor(minutes / 60), m: minutes % 60 });
}

/** A limit figure short: 50000 -> "50k", 2500 -> "2.5k", 1000000 -> "1M". */
export function shortFigure(value) {
  const short = (n, unit) => `${Number((value / n).toFixed(1))}${unit}`;
  if (value >= 1e9) return short(1e9, "B");
  if (value >= 1e6) return short(1e6, "M");
  if (value >= 1e3) return short(1e3, "k");
  return String(value);
}
