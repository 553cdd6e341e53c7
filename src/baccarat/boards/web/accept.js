// The check every body from the broker passes before the web board or the pit console
// folds it: the twin of src/baccarat/boards/accept.py (the terminal board's), on the same
// tables and schemas (catalog.js, generated from the Python catalogue).
//
// Everything read from a broker is hostile input. Operators may write a table's `limits`,
// so a body of any `type` can come there: a body is never folded by its `type` alone. The
// topic's last level decides the only types it may carry (TOPIC_TYPES); the body must be
// what that type's JSON Schema says (types, enums, required fields, no unknown field); no
// number is infinite or beyond 2^53; a body is at most MAX_BYTES long and MAX_DEPTH deep;
// a `table` field names the topic's table. Anything else is refused with a reason, and
// counted by the caller (the state's `rejected`): never thrown.
//
//   check(kind, text, table, bytes)     -> {body} | {refused: reason}
//   receiveBody(state, kind, text, table, bytes) -> the board state after the body
//   skipped(kind)                       -> true for what boards do not read (cmd/, reply)

import { MAX_BYTES, MAX_DEPTH, SAFE_INTEGER, SCHEMAS, TOPIC_MAX_BYTES, TOPIC_TYPES } from "./catalog.js";
import { fold, rejected, withControllerStatus, withLimits } from "./state.js";

export { TOPIC_TYPES };

/** The schema keywords the check understands; tests/boards/test_accept.py holds the schemas to them. */
export const KEYWORDS = [
  "$defs", "$ref", "additionalProperties", "anyOf", "const", "enum", "items", "maxLength",
  "maximum", "minLength", "minimum", "properties", "required", "type",
];
const PLAIN_STATUS = new Set(["online", "offline"]);

/** A topic under the table that boards do not read: commands and their replies. */
export function skipped(kind) {
  return kind.startsWith("cmd/") || kind === "reply" || kind.startsWith("reply/");
}

/** The largest body a topic's last level `kind` may carry (the catalogue's TOPIC_MAX_BYTES). */
export function maxBytes(kind) {
  const base = kind.startsWith("cmd/") ? "cmd" : kind.startsWith("reply") ? "reply" : kind;
  return Object.hasOwn(TOPIC_MAX_BYTES, base) ? TOPIC_MAX_BYTES[base] : MAX_BYTES;
}

const DECODER = new TextDecoder();

/**
 * A payload's text, or null when it is longer than its topic allows: a body is measured by
 * its length before anything is done with it, so that no body can hold up the page.
 */
export function bodyText(kind, payload) {
  return payload.length > maxBytes(kind) ? null : DECODER.decode(payload);
}

/** Why a body of `bytes` bytes on `kind` is refused for its length. */
export function tooLarge(kind, bytes) {
  return `body of ${bytes} bytes, over the ${maxBytes(kind)} a ${kind} body may have`;
}

/**
 * The body of `text` on {prefix}/{table}/{kind} checked: {body}, or {refused: reason}.
 * `bytes`: the payload's length in bytes (the text's length if not given).
 */
export function check(kind, text, table, bytes = text.length) {
  try {
    return { body: checked(kind, text, table, bytes) };
  } catch (error) {
    return { refused: error instanceof Refusal ? error.message : `unreadable: ${String(error).slice(0, 80)}` };
  }
}

/**
 * The board state after a body on the table's topic `kind`: checked, then folded; a
 * refused body only counts (state.rejected, and state.refusedWhy says the last reason).
 */
export function receiveBody(state, kind, text, table, bytes = text.length) {
  if (skipped(kind)) return state; // commands, replies
  if (text === null) return rejected(state, tooLarge(kind, bytes)); // never decoded
  if (!text) return state; // a retained body cleared
  const verdict = check(kind, text, table, bytes);
  if (verdict.refused !== undefined) return rejected(state, verdict.refused);
  const body = verdict.body;
  switch (body.type) {
    case "status":
      return withControllerStatus(state, body.state);
    case "fault":
      return state; // the journal fault: the retained status says offline, and why
    case "limits":
      return withLimits(state, body);
    case "edge":
      return state; // the live edge, for the house's eyes only: the pit keeps it (pit/web/edge.js)
    default:
      return fold(state, body);
  }
}

class Refusal extends Error {}

// The table's chain member (docs/record.md, "The chain and the signatures"): the trailing
// `"chain":{...}` of an event's body, taken off by its exact shape before the body is
// checked against its schema, as boards/accept.py does with baccarat.chain.split. A board
// does not check the signature; the recorder and `baccarat verify` do.
const CHAIN_MEMBER =
  /,"chain":\{(?:"after":(?:0|[1-9][0-9]{0,18}),)?(?:"handover":\{"from":"[0-9a-f]{16}","pub":"[A-Za-z0-9_-]{43}","sig":"[A-Za-z0-9_-]{86}"\},)?"prev":"[0-9a-f]{64}","key":"[0-9a-f]{16}","sig":"[A-Za-z0-9_-]{86}"\}\}$/;

/** The engine's body of a published body: its chain member taken off. */
export function unsealed(text) {
  return text.replace(CHAIN_MEMBER, "}");
}

function refuse(reason) {
  throw new Refusal(reason);
}

function checked(kind, text, table, bytes) {
  const allowed = Object.hasOwn(TOPIC_TYPES, kind) ? TOPIC_TYPES[kind] : null;
  if (allowed === null) refuse(`unknown topic ${shown(kind)}`);
  if (bytes > maxBytes(kind)) refuse(tooLarge(kind, bytes));
  if (kind === "status" && PLAIN_STATUS.has(text.trim())) {
    return { type: "status", state: text.trim() }; // a plain status, as tests send
  }
  let body;
  try {
    body = JSON.parse(unsealed(text));
  } catch {
    refuse("not JSON");
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) refuse("not a JSON object");
  checkValues(body);
  const name = body.type;
  if (typeof name !== "string" || !allowed.includes(name)) {
    refuse(`a ${shown(name)} body on a ${kind} topic`);
  }
  if (Object.hasOwn(body, "table") && body.table !== table) {
    refuse(`a body of table ${shown(body.table)} on ${table}'s topic`);
  }
  const schema = SCHEMAS[name];
  matches(body, schema, schema, name);
  if (name === "limits") {
    // what no JSON Schema says (messages/limits.py BetLimit): min is not above max
    for (const [bet, figures] of Object.entries(body)) {
      if (figures && typeof figures === "object" && figures.min > figures.max) {
        refuse(`limits: ${bet} min ${figures.min} is above max ${figures.max}`);
      }
    }
  }
  return body;
}

/** Nesting at most MAX_DEPTH, every number finite and within SAFE_INTEGER. */
function checkValues(body) {
  const stack = [[body, 1]];
  while (stack.length) {
    const [value, depth] = stack.pop();
    if (value !== null && typeof value === "object") {
      if (depth > MAX_DEPTH) refuse(`nested deeper than the ${MAX_DEPTH} allowed`);
      for (const item of Object.values(value)) stack.push([item, depth + 1]);
    } else if (typeof value === "number" && !(Math.abs(value) <= SAFE_INTEGER)) {
      refuse(`number ${shown(value)} is out of range`);
    }
  }
}

function typeOf(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value; // "object", "string", "number", "boolean"
}

function isType(value, type) {
  if (Array.isArray(type)) return type.some((one) => isType(value, one));
  if (type === "integer") return Number.isInteger(value);
  if (type === "number") return typeof value === "number" && Number.isFinite(value);
  return typeOf(value) === type;
}

/** `value` against `schema` (a part of `root`, whose $defs $ref names), or refused at `where`. */
function matches(value, schema, root, where) {
  if (schema.$ref !== undefined) {
    const name = String(schema.$ref).replace("#/$defs/", "");
    return matches(value, root.$defs[name], root, where);
  }
  if (schema.anyOf !== undefined) {
    const fits = schema.anyOf.some((part) => {
      try {
        matches(value, part, root, where);
        return true;
      } catch (error) {
        if (error instanceof Refusal) return false;
        throw error;
      }
    });
    if (!fits) refuse(`${where} is ${shown(value)}, not what the schema allows`);
    return undefined;
  }
  if (schema.type !== undefined && !isType(value, schema.type)) {
    refuse(`${where} is ${typeOf(value)} ${shown(value)}, not ${[schema.type].flat().join(" or ")}`);
  }
  if (schema.const !== undefined && value !== schema.const) refuse(`${where} is not ${shown(schema.const)}`);
  if (schema.enum !== undefined && !schema.enum.includes(value)) {
    refuse(`${where} ${shown(value)} is not one of ${schema.enum.join(", ")}`);
  }
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum) refuse(`${where} is below ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) refuse(`${where} is above ${schema.maximum}`);
  }
  if (typeof value === "string") {
    const length = [...value].length;
    if (schema.minLength !== undefined && length < schema.minLength) refuse(`${where} is too short`);
    if (schema.maxLength !== undefined && length > schema.maxLength) refuse(`${where} is too long`);
  }
  if (Array.isArray(value) && schema.items !== undefined) {
    value.forEach((item, i) => matches(item, schema.items, root, `${where}[${i}]`));
  }
  if (typeOf(value) === "object") matchesObject(value, schema, root, where);
  return undefined;
}

function matchesObject(value, schema, root, where) {
  const properties = schema.properties || {};
  for (const field of schema.required || []) {
    if (!Object.hasOwn(value, field)) refuse(`${where}: no ${field}`);
  }
  for (const [field, item] of Object.entries(value)) {
    if (Object.hasOwn(properties, field)) matches(item, properties[field], root, `${where}.${field}`);
    else if (schema.additionalProperties === false) refuse(`${where}: unknown field ${shown(field)}`);
  }
}

function shown(value) {
  let text;
  try {
    text = typeof value === "string" ? JSON.stringify(value) : String(JSON.stringify(value) ?? value);
  } catch {
    text = typeof value;
  }
  return text.length <= 40 ? text : `${text.slice(0, 37)}...`;
}
