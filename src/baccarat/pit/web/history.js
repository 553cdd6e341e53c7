// The history view: a table's shoes and rounds as the floor recorder stored them, read from
// the console's own server (GET history.json, the same rounds as `baccarat history --db`).
// Without a database (`baccarat pit` started without --db) the server says so and so does
// the view.
//
// The history needs a login of its own: at the console's login, before the page connects
// to the broker, login() posts the operator's username and password to the console's
// server (history/login, HTTP Basic), which checks them by logging in to the broker and
// answers an HttpOnly cookie that every history request (and the CSV download) then
// carries. It must come first: the broker gives each client its username as client id,
// so the server's check would take the page's own connection if it came later.

//
// The header also shows how many bodies the floor recorder quarantined (on the topics the
// operator may read), from history/quarantine.json: asked at login, every
// QUARANTINE_EVERY_MS after, and whenever a table's history opens.

import { fillTexts } from "./board/labels.js";
import { PIT } from "./pit_labels.js";
import { historyAlarmWords, outcomeWords, pitSay, say } from "./words.js";

const $ = (id) => document.getElementById(id);

export const QUARANTINE_EVERY_MS = 5000;

/**
 * The header's words for a quarantine answer in `lang`, or "" when there is nothing to
 * say (the newest reason is the recorder's own text, in English).
 */
export function quarantineText(found, lang = "en") {
  if (!found || found.error || !found.quarantined) return "";
  const n = `${found.quarantined}${found.more ? "+" : ""}`;
  const reason = found.newest ? found.newest.reason : "";
  if (!reason) return pitSay("quarantined", { n }, lang);
  return pitSay("quarantined_newest", { n, why: reason.length > 60 ? `${reason.slice(0, 60)}…` : reason }, lang);
}

/** The address of a table's history: its shoes only (shoe null), or one shoe's rounds. */
export function historyUrl(table, shoe = null, format = "json") {
  const query = new URLSearchParams({ table });
  if (shoe === null) query.set("limit", "0");
  else query.set("shoe", String(shoe));
  if (format !== "json") query.set("format", format);
  return `history.json?${query}`;
}

/** A round's totals as "6–7", or "" before its result. */
export function totals(round) {
  return round.player_total === null || round.banker_total === null
    ? ""
    : `${round.player_total}–${round.banker_total}`;
}

/**
 * The JSON the console's server answers, or {error, status}: the error is the server's
 * own text (English), or three texts of the console's when it said nothing.
 */
async function fetchJson(url) {
  let response;
  try {
    response = await fetch(url, { cache: "no-store" });
  } catch {
    return { error: PIT.server_unreachable };
  }
  let body;
  try {
    body = await response.json();
  } catch {
    return { error: fillTexts(PIT.server_no_json, { status: response.status }) };
  }
  if (!response.ok) {
    return { error: body.error || fillTexts(PIT.server_answered, { status: response.status }), status: response.status };
  }
  return body;
}

function cell(text, className = "") {
  const td = document.createElement("td");
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

/** The Authorization header of HTTP Basic for a username and password (UTF-8). */
export function basicAuthorization(username, password) {
  const bytes = new TextEncoder().encode(`${username}:${password}`);
  return `Basic ${btoa(String.fromCharCode(...bytes))}`;
}

export class HistoryView {
  constructor(onClose, lang = "en") {
    this.lang = lang;
    this.table = null;
    this.shoe = null;
    this.requests = 0;
    this.loginProblem = null; // why the history login failed, shown when the view opens
    this.loggingOut = Promise.resolve(); // a logout's cookie clearing must not follow a login
    this.quarantineTimer = null;
    this.quarantineAsked = 0;
    this.configured = true; // false once the server says it has no database (no history)
    this.quarantine = undefined; // the last quarantine answer, and what the view says
    this.said = null;
    this.rounds = null;
    $("history-close").addEventListener("click", () => {
      this.close();
      onClose();
    });
  }

  /** Log in to the history with the console's account; never throws (the view says why). */
  async login(username, password) {
    this.loginProblem = null;
    await this.loggingOut;
    try {
      const response = await fetch("history/login", {
        method: "POST",
        cache: "no-store",
        headers: { Authorization: basicAuthorization(username, password) },
      });
      const body = await response.json().catch(() => ({}));
      this.configured = body.history !== false;
      if (!response.ok) this.loginProblem = fillTexts(PIT.history_login_refused, { why: body.error || response.status });
    } catch {
      this.loginProblem = PIT.history_login_unreachable;
    }
  }

  /** Ask for the quarantine count now and every QUARANTINE_EVERY_MS until logout. */
  watchQuarantine() {
    this.stopQuarantine();
    if (!this.configured) return; // a console with no database has no recorder to ask
    this.refreshQuarantine();
    this.quarantineTimer = setInterval(() => this.refreshQuarantine(), QUARANTINE_EVERY_MS);
  }

  stopQuarantine() {
    if (this.quarantineTimer !== null) clearInterval(this.quarantineTimer);
    this.quarantineTimer = null;
    this.quarantineAsked++;
    this.showQuarantine(null);
  }

  /** The recorder's quarantine count, in the header (window.pitQuarantine for tests). */
  async refreshQuarantine() {
    const asked = ++this.quarantineAsked;
    const found = await fetchJson("history/quarantine.json");
    if (asked === this.quarantineAsked) this.showQuarantine(found);
  }

  showQuarantine(found) {
    window.pitQuarantine = found;
    this.quarantine = found;
    const box = $("quarantined");
    const text = quarantineText(found, this.lang);
    box.hidden = !text;
    box.textContent = text;
    box.dataset.quarantined = found && !found.error ? String(found.quarantined) : "";
    const newest = found && !found.error ? found.newest : null;
    box.title = newest
      ? pitSay("quarantine_newest_title", { topic: newest.topic, why: newest.reason }, this.lang)
      : pitSay("quarantine_title", {}, this.lang);
  }

  /** Everything shown again in the page's language (after it changed). */
  redraw() {
    if (this.quarantine !== undefined) this.showQuarantine(this.quarantine);
    if (this.table !== null) $("history-title").textContent = pitSay("history_of", { table: this.table }, this.lang);
    if (this.said) this.state(...this.said);
    if (this.rounds) $("history-rounds").replaceChildren(...this.rounds.map((r) => this.roundRow(r)));
    for (const button of $("history-shoes").children) button.textContent = this.shoeText(button.summary);
  }

  /** Forget the history login (the server drops the token, the cookie is cleared). */
  logout() {
    this.stopQuarantine();
    this.loginProblem = null;
    this.loggingOut = fetch("history/logout", { method: "POST", cache: "no-store" }).catch(() => {});
  }

  /** Show ``table``'s history: its shoes, then the newest shoe's rounds. */
  async open(table) {
    this.table = table;
    const root = $("history");
    root.hidden = false;
    root.dataset.table = table;
    this.rounds = null;
    $("history-title").textContent = pitSay("history_of", { table }, this.lang);
    $("history-shoes").replaceChildren();
    $("history-rounds").replaceChildren();
    $("history-csv").hidden = true;
    const request = ++this.requests;
    this.refreshQuarantine();
    this.state("loading", PIT.reading_history);
    const found = await fetchJson(historyUrl(table));
    if (request !== this.requests) return;
    if (found.error) {
      const text = found.status === 401 && this.loginProblem ? this.loginProblem : found.error;
      this.state({ 404: "unconfigured", 401: "login", 403: "forbidden" }[found.status] || "error", text);
      return;
    }
    if (!found.shoes.length) {
      this.state("empty", fillTexts(PIT.no_shoe, { table }));
      return;
    }
    $("history-shoes").replaceChildren(...found.shoes.map((s) => this.shoeButton(s)));
    await this.showShoe(found.shoes[found.shoes.length - 1].shoe);
  }

  close() {
    this.requests++;
    this.table = null;
    $("history").hidden = true;
  }

  shoeButton(summary) {
    const button = document.createElement("button");
    button.type = "button";
    button.dataset.shoe = String(summary.shoe);
    button.summary = summary;
    button.textContent = this.shoeText(summary);
    button.addEventListener("click", () => this.showShoe(summary.shoe));
    return button;
  }

  shoeText(summary) {
    const day = summary.first ? new Date(summary.first * 1000).toISOString().slice(0, 16).replace("T", " ") : "";
    return day
      ? pitSay("shoe_button_day", { n: summary.shoe, day }, this.lang)
      : pitSay("shoe_button", { n: summary.shoe }, this.lang);
  }

  async showShoe(shoe) {
    const table = this.table;
    this.shoe = shoe;
    $("history").dataset.shoe = String(shoe);
    for (const button of $("history-shoes").children) {
      button.setAttribute("aria-pressed", String(button.dataset.shoe === String(shoe)));
    }
    const request = ++this.requests;
    this.state("loading", fillTexts(PIT.reading_shoe, { n: shoe }));
    const found = await fetchJson(historyUrl(table, shoe));
    if (request !== this.requests) return;
    if (found.error) {
      this.state("error", found.error);
      return;
    }
    this.rounds = found.rounds;
    $("history-rounds").replaceChildren(...found.rounds.map((r) => this.roundRow(r)));
    const csv = $("history-csv");
    csv.href = historyUrl(table, shoe, "csv");
    csv.download = `${table}-shoe-${shoe}.csv`;
    csv.hidden = false;
    this.state("ready", fillTexts(PIT.shoe_rounds, { n: shoe, rounds: found.rounds.length }));
  }

  roundRow(round) {
    const row = document.createElement("tr");
    row.className = "history-round";
    row.dataset.round = String(round.round);
    row.dataset.outcome = round.outcome;
    const alarms = document.createElement("td");
    alarms.className = "history-alarms";
    for (const alarm of round.alarms) {
      const line = document.createElement("div");
      line.textContent = say(historyAlarmWords(alarm), this.lang);
      line.dataset.alarm = alarm;
      alarms.append(line);
    }
    row.append(
      cell(String(round.round)),
      cell(round.cards.join("  "), "history-cards"),
      cell(say(outcomeWords(round.outcome), this.lang) + (round.demo ? pitSay("demo_round", {}, this.lang) : ""), "history-outcome"),
      cell(totals(round), "history-totals"),
      alarms,
    );
    return row;
  }

  /** The view's state and what it says: three texts of the console's, or the server's own (English). */
  state(name, text) {
    this.said = [name, text];
    $("history").dataset.state = name;
    const status = $("history-status");
    status.textContent = Array.isArray(text) ? say(text, this.lang) : text;
    if (Array.isArray(text)) status.removeAttribute("lang");
    else status.lang = "en";
  }
}
