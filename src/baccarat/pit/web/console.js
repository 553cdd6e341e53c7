// What the pit console knows and may do, folded from every table's messages. Pure: no DOM,
// no network, no clock. Each table's state is the web board's own (../board/state.js,
// the same folding rules: seq, duplicates, restarts, retained alarms); the console adds
// the table list, the replies to the operator's commands and what each alarm allows.

import { receiveBody } from "./board/accept.js";
import { emptyState } from "./board/state.js";

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

/** The console's state: tables by name (each a board state), replies, sent commands. */
export function emptyConsole() {
  return { tables: {}, replies: [], pending: {} };
}

/**
 * The console after one message on a table's topic (`text` is its body as text, `bytes`
 * its length in bytes).
 */
export function receive(console_, prefix, topic, text, bytes = text.length) {
  const where = parseTopic(prefix, topic);
  if (where === null) return console_;
  const { table, kind } = where;
  if (kind.startsWith("cmd/")) return console_;
  if (isReply(kind)) return withReply(console_, table, text);
  if (!text) return console_; // a retained body cleared
  const before = console_.tables[table] || emptyState(table);
  // checked against its topic before it is folded (the board's accept.js): a body of
  // another type, or with fields not of its schema, is counted on the table, never shown
  const after = receiveBody(before, kind, text, table, bytes);
  if (after === before && console_.tables[table]) return console_;
  return { ...console_, tables: { ...console_.tables, [table]: after } };
}

/** Bodies refused on every table's topics, all told. */
export function refusedCount(console_) {
  return Object.values(console_.tables).reduce((sum, table) => sum + table.rejected, 0);
}

/** The table names, sorted as people read them (T2 before T10). */
export function tableNames(console_) {
  return Object.keys(console_.tables).sort((a, b) =>
    a.localeCompare(b, "en", { numeric: true }),
  );
}

/** A command the operator sent, waiting for its reply (by its request id). */
export function withSent(console_, id, table, command) {
  const pending = { ...console_.pending, [id]: { table, command } };
  const replies = [...console_.replies, { id, table, command, ok: null, error: null }];
  return { ...console_, pending, replies: replies.slice(-REPLIES_KEPT) };
}

/** A command the broker refused (its PUBACK reason code) or that could not be sent. */
export function withSendError(console_, id, error) {
  return updateReply(console_, id, { ok: false, error });
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
  const error = body.ok ? null : String(body.error || "refused");
  return updateReply(console_, id, { ok: body.ok === true, error, table });
}

function updateReply(console_, id, fields) {
  const replies = console_.replies.map((r) => (r.id === id ? { ...r, ...fields } : r));
  const pending = { ...console_.pending };
  delete pending[id];
  return { ...console_, replies, pending };
}

/**
 * The buttons an open alarm allows: {command, body, text, confirm?} each. `deal` is no
 * command (the missing card comes from the shoe): it is shown as a hint, never a button.
 */
export function alarmActions(alarm) {
  const actions = [];
  const corrections = Array.isArray(alarm.corrections) ? alarm.corrections : [];
  // this alarm's card, not the oldest card any alarm holds (another may hold an older one)
  const burn = Number.isInteger(alarm.id) && alarm.id > 0 ? { alarm: alarm.id } : {};
  for (const correction of corrections) {
    if (correction === "accept_as_burn") {
      actions.push({ command: "accept_as_burn", body: burn, text: "Accept as burn" });
      if ((alarm.count || 1) > 1) {
        actions.push({
          command: "accept_as_burn",
          body: burn,
          text: `Accept all ${alarm.count} as burn`,
          repeat: alarm.count,
          bulk: true,
        });
      }
    } else if (correction === "void") {
      actions.push(voidAction(alarm.round, `settles ${alarm.kind}`));
    } else if (correction === "declare") {
      for (const winner of WINNERS) {
        actions.push({ command: "declare", body: { winner }, text: `Declare ${winner}` });
      }
    } else if (correction === "burn") {
      actions.push({ command: "burn", body: { count: 1 }, text: "Burn a card" });
    } else if (correction === "open") {
      actions.push({ command: "open", body: {}, text: "Open the round" });
    }
  }
  return actions;
}

/** Void the round (a confirmation first: a void whose result was published leaves the roads). */
export function voidAction(round, why) {
  const which = round ? `round ${round}` : "the round";
  return {
    command: "void",
    body: { confirm: true, reason: `pit console: ${why}` },
    text: "Void",
    confirm: `Void ${which}? It never counts; a result already shown leaves the roads.`,
  };
}

/** What `deal` asks for, if the alarm allows it: a text, no button. */
export function dealHint(alarm) {
  return Array.isArray(alarm.corrections) && alarm.corrections.includes("deal")
    ? "Deal the card that is due from the shoe"
    : "";
}

/** The table's own buttons: new shoe, end shoe, demo on/off, burn, declare, open, void. */
export function tableActions(state) {
  const shoe = state.shoe;
  const demoOn = !!(shoe && shoe.demo);
  const live = state.live;
  return [
    { command: "shoe", body: {}, text: "New shoe", key: "shoe" },
    { command: "end", body: {}, text: "End shoe", key: "end", confirm: "End the shoe?" },
    { command: "demo", body: { on: !demoOn }, text: demoOn ? "Demo off" : "Demo on", key: "demo" },
    { command: "burn", body: { count: 1 }, text: "Burn", key: "burn" },
    { command: "open", body: {}, text: "Open round", key: "open" },
    ...WINNERS.map((winner) => ({
      command: "declare",
      body: { winner },
      text: `Declare ${winner}`,
      key: `declare-${winner}`,
    })),
    { ...voidAction(live ? live.round : null, "operator"), key: "void" },
  ];
}

/**
 * The retained limits body for `table` from the form's figures ({banker: {min, max}, ...},
 * texts as typed), or {error} saying which figure is wrong.
 */
export function limitsBody(table, figures, operator, currency, ts) {
  const body = { schema: 1, type: "limits", table };
  for (const bet of LIMIT_BETS) {
    const parsed = {};
    for (const end of ["min", "max"]) {
      const text = String((figures[bet] || {})[end] ?? "").trim();
      if (!/^\d+$/.test(text)) return { error: `${bet} ${end}: a whole number, not "${text}"` };
      const value = Number(text);
      if (value > MAX_STAKE) return { error: `${bet} ${end}: at most ${MAX_STAKE}` };
      parsed[end] = value;
    }
    if (parsed.max < 1) return { error: `${bet} max: at least 1` };
    if (parsed.min > parsed.max) {
      return { error: `${bet}: min ${parsed.min} is above max ${parsed.max}` };
    }
    body[bet] = parsed;
  }
  const code = String(currency || "").trim();
  if (code && !/^[A-Z]{3}$/.test(code)) return { error: `currency: three capitals (HKD), not "${code}"` };
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

/** The page's words for a CONNACK refusal (MQTT 5 reason codes), or the error's own. */
export function loginError(error) {
  const code = error && error.code;
  if (code === 134 || code === 135 || code === 4 || code === 5) {
    return "Wrong username or password: the broker refused the login.";
  }
  if (code === 136 || code === 3) return "The broker is unavailable.";
  return `Cannot log in: ${(error && error.message) || error}`;
}
