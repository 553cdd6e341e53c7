// The history view: a table's shoes and rounds as the floor recorder stored them, read from
// the console's own server (GET history.json, the same rounds as `baccarat history --db`).
// Without a database (`baccarat pit` started without --db) the server says so and so does
// the view.

const $ = (id) => document.getElementById(id);

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

async function fetchJson(url) {
  let response;
  try {
    response = await fetch(url, { cache: "no-store" });
  } catch {
    return { error: "Cannot reach the console's server." };
  }
  let body;
  try {
    body = await response.json();
  } catch {
    return { error: `The server answered ${response.status} without JSON.` };
  }
  if (!response.ok) return { error: body.error || `The server answered ${response.status}.`, status: response.status };
  return body;
}

function cell(text, className = "") {
  const td = document.createElement("td");
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

export class HistoryView {
  constructor(onClose) {
    this.table = null;
    this.shoe = null;
    this.requests = 0;
    $("history-close").addEventListener("click", () => {
      this.close();
      onClose();
    });
  }

  /** Show ``table``'s history: its shoes, then the newest shoe's rounds. */
  async open(table) {
    this.table = table;
    const root = $("history");
    root.hidden = false;
    root.dataset.table = table;
    $("history-title").textContent = `History of ${table}`;
    $("history-shoes").replaceChildren();
    $("history-rounds").replaceChildren();
    $("history-csv").hidden = true;
    const request = ++this.requests;
    this.state("loading", "Reading the history…");
    const found = await fetchJson(historyUrl(table));
    if (request !== this.requests) return;
    if (found.error) {
      this.state(found.status === 404 ? "unconfigured" : "error", found.error);
      return;
    }
    if (!found.shoes.length) {
      this.state("empty", `No shoe of ${table} is recorded.`);
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
    const day = summary.first ? new Date(summary.first * 1000).toISOString().slice(0, 16).replace("T", " ") : "";
    button.textContent = `Shoe ${summary.shoe}${day ? ` · ${day} UTC` : ""}`;
    button.addEventListener("click", () => this.showShoe(summary.shoe));
    return button;
  }

  async showShoe(shoe) {
    const table = this.table;
    this.shoe = shoe;
    $("history").dataset.shoe = String(shoe);
    for (const button of $("history-shoes").children) {
      button.setAttribute("aria-pressed", String(button.dataset.shoe === String(shoe)));
    }
    const request = ++this.requests;
    this.state("loading", `Reading shoe ${shoe}…`);
    const found = await fetchJson(historyUrl(table, shoe));
    if (request !== this.requests) return;
    if (found.error) {
      this.state("error", found.error);
      return;
    }
    $("history-rounds").replaceChildren(...found.rounds.map((r) => this.roundRow(r)));
    const csv = $("history-csv");
    csv.href = historyUrl(table, shoe, "csv");
    csv.download = `${table}-shoe-${shoe}.csv`;
    csv.hidden = false;
    this.state("ready", `Shoe ${shoe}: ${found.rounds.length} rounds`);
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
      line.textContent = alarm;
      alarms.append(line);
    }
    row.append(
      cell(String(round.round)),
      cell(round.cards.join("  "), "history-cards"),
      cell(round.outcome + (round.demo ? " (demo)" : ""), "history-outcome"),
      cell(totals(round)),
      alarms,
    );
    return row;
  }

  state(name, text) {
    $("history").dataset.state = name;
    $("history-status").textContent = text;
  }
}
