// What the pit console says of alarms, corrections and who gave them, in the staff's
// language: every text comes from the board's one table of labels (board/labels.js), as
// three texts (en, zh-Hant, zh-Hans); say() picks one. No snake_case name reaches the
// page: a kind or a correction the table does not know (a newer controller's) is shown as
// words too ("new_kind" -> "New kind"). Pure: no DOM.

import {
  ALARM_KINDS,
  ALARM_WORDS,
  CORRECTIONS,
  fill,
  fillTexts,
  LABELS,
  languageMode,
  ORIGINS,
  SETTLED_BY,
  TABLE_COMMANDS,
} from "./board/labels.js";
import { PIT } from "./pit_labels.js";

/**
 * The console's language mode from a ?lang= value, as the board reads it (labels.js
 * languageMode: both, en, zh-Hant or zh, zh-Hans, both-Hans, any case); English without
 * one (the board's default is both: its players read Chinese first).
 */
export function consoleLanguage(value) {
  return languageMode(value) || "en";
}

/** Which of a label's three texts each language mode shows, in order. */
const SHOWN = { en: [0], "zh-Hant": [1], "zh-Hans": [2], both: [0, 1], "both-Hans": [0, 2] };

/** A label's texts as the language mode `lang` shows them (both: "English 中文"). */
export function say(texts, lang = "en") {
  const shown = (SHOWN[lang] || SHOWN.en).map((i) => texts[Math.min(i, texts.length - 1)]);
  return shown.filter((text, i) => shown.indexOf(text) === i).join(" ");
}

/** The console's own label `key` (pit_labels.js), filled from `values`, in `lang`. */
export function pitSay(key, values = {}, lang = "en") {
  const texts = PIT[key];
  if (!texts) {
    console.error(`pit: no label ${key}`); // tests/pit/test_pit_labels.py fails on this
    return key;
  }
  return say(fillTexts(texts, values), lang);
}

/** A name as words when no label has it: "new_kind" -> "New kind" (the same in all three). */
function asWords(name) {
  const text = String(name ?? "").replaceAll("_", " ").trim();
  return [text.charAt(0).toUpperCase() + text.slice(1)];
}

export function kindWords(kind) {
  return ALARM_KINDS[kind] || asWords(kind);
}

export function correctionWords(correction) {
  return CORRECTIONS[correction] || asWords(correction);
}

/** A command's name as words (a correction's, or the table's own: new shoe, end shoe, demo). */
export function commandWords(command) {
  return CORRECTIONS[command] || TABLE_COMMANDS[command] || asWords(command);
}

export function settledWords(by) {
  return SETTLED_BY[by] || asWords(by).map((t) => t.toLowerCase());
}

/** Who gave a command: pit/<operator>, pit, button; null or "" for none. */
export function originWords(origin) {
  if (!origin) return null;
  if (origin.startsWith("pit/")) return fillTexts(ORIGINS.operator, { who: origin.slice(4) });
  return ORIGINS[origin] || [origin];
}

/** The alarm's article of the rules, or null: a device alarm (article "device") has none. */
export function articleWords(alarm) {
  if (!alarm.article || alarm.article === "device") return null;
  return fill("article", { a: alarm.article });
}

/** How many cards the alarm holds aside (its cards list, else its count), or 0. */
export function heldCount(alarm) {
  if (Array.isArray(alarm.cards) && alarm.cards.length) return alarm.cards.length;
  return alarm.card || (alarm.count || 0) > 1 ? alarm.count || 1 : 0;
}

/** What happened, in a sentence: "Extra card, in round 2, 3 cards held aside". */
export function alarmSentence(alarm) {
  const parts = [kindWords(alarm.kind)];
  if (alarm.round) parts.push(fillTexts(ALARM_WORDS.in_round, { n: alarm.round }));
  const held = heldCount(alarm);
  if (held === 1) parts.push(ALARM_WORDS.held_one);
  else if (held > 1) parts.push(fillTexts(ALARM_WORDS.held, { n: held }));
  return [0, 1, 2].map((i) => parts.map((p) => p[Math.min(i, p.length - 1)]).join(i ? "，" : ", "));
}

const HISTORY_ALARM = /^(\w+) #(\d+) (?:settled by (\w+)(?: \((.+)\))?|(open))$/;

/**
 * A history line (baccarat.floor.history: "missing_card #1 settled by deal (pit/pit-ana)",
 * "extra_card #3 open") as words; a line of another form as it came, in words.
 */
export function historyAlarmWords(text) {
  const found = HISTORY_ALARM.exec(String(text));
  if (!found) return [String(text).replaceAll("_", " ")];
  const [, kind, id, by, origin, open] = found;
  if (open) return fillTexts(ALARM_WORDS.open, { kind: kindWords(kind), id });
  const origins = originWords(origin);
  return origins
    ? fillTexts(ALARM_WORDS.settled_from, { kind: kindWords(kind), id, by: settledWords(by), origin: origins })
    : fillTexts(ALARM_WORDS.settled, { kind: kindWords(kind), id, by: settledWords(by) });
}

const OUTCOMES = { banker: "banker_wins", player: "player_wins", tie: "tie_result" };

/** A history round's outcome ("banker", "void (pit/pit-ana)", "") as words. */
export function outcomeWords(outcome) {
  const text = String(outcome || "");
  if (OUTCOMES[text]) return LABELS[OUTCOMES[text]];
  const voided = /^void(?: \((.+)\))?$/.exec(text);
  if (voided) {
    return voided[1]
      ? fillTexts(ALARM_WORDS.voided_from, { origin: originWords(voided[1]) })
      : ALARM_WORDS.voided;
  }
  return [text.replaceAll("_", " ")];
}

/**
 * A controller's text (a refusal's reason) with the names of kinds and corrections in it
 * as words: "alarm #1 result_mismatch is open" -> "alarm #1 (Result mismatch) is open".
 */
export function wordsIn(text, lang = "en") {
  return String(text).replace(/\b[a-z]+(?:_[a-z]+)+\b/g, (name) => {
    const texts = ALARM_KINDS[name] || CORRECTIONS[name];
    return texts ? `(${say(texts, lang)})` : name.replaceAll("_", " ");
  });
}
