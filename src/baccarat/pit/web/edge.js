// The live edge of each table as the pit console keeps it: the `edge` topic's retained
// body (the daemon's edge watch, controller/edge_watch.py), checked against its schema
// like every other body (board/accept.js), and the `advantage` notices the engine raises
// when a bet's player edge crosses the table's threshold. Pure: no DOM, no network.
//
// The floor does not subscribe to the edge (a message a card per table); a table's own
// view does ({table}/#), and shows its tie's and pairs' player edges. The advantage
// notices come on `alarm`, which the floor reads: they go to the queue while they stand.

import { SURVEILLANCE } from "./board/alarm_kinds.js";
import { check } from "./board/accept.js";
import { PIT } from "./pit_labels.js";
import { say } from "./words.js";

/** The bets a table's view shows the edge of, and their captions (a label's three texts). */
export const EDGE_BETS = [
  ["tie", PIT.edge_tie], ["player_pair", PIT.edge_player_pair], ["banker_pair", PIT.edge_banker_pair],
  // EZ Baccarat's side bets: in the body only where the table's profile deals them
  ["dragon7", PIT.edge_dragon7], ["panda8", PIT.edge_panda8],
];

/**
 * The edges by table after one body on a table's `edge` topic: a body that fails the
 * schema is left out (and counted by the caller), one older than the kept one (its input's
 * time, `ts`) too.
 */
export function withEdge(edges, table, text, bytes = text.length) {
  const verdict = check("edge", text, table, bytes);
  if (verdict.refused !== undefined) return { edges, refused: verdict.refused };
  const body = verdict.body;
  const kept = edges[table];
  if (kept && typeof kept.ts === "number" && typeof body.ts === "number" && body.ts < kept.ts) {
    return { edges };
  }
  return { edges: { ...edges, [table]: body } };
}

/** The player edge (the bettor's, per unit staked) as people read it: "+1.63 %", "-14.36 %". */
export function percent(playerEdge) {
  const text = (playerEdge * 100).toFixed(2);
  return `${playerEdge > 0 ? "+" : ""}${text} %`;
}

/** One line for the table's view in `lang`: "Tie -14.36 % · P pair +0.52 % ▲ · ...", or "–". */
export function edgeText(body, lang = "en") {
  if (!body) return "–";
  const over = Array.isArray(body.over) ? body.over : [];
  return EDGE_BETS.filter(([bet]) => body[bet]).map(([bet, caption]) =>
    `${say(caption, lang)} ${percent(-body[bet].edge)}${over.includes(bet) ? " ▲" : ""}`).join(" · ");
}

/** The table's advantage notices (alarm_kinds.js SURVEILLANCE) that stand: for the queue. */
export function advantages(state) {
  return state.alarms.filter((a) => SURVEILLANCE.has(a.kind));
}
