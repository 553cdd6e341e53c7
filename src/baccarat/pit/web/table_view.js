// A table's own view in the pit console (pit.js): its card (status, shoe, round, cards
// left, demo, open alarms with their buttons and held cards, one-off notices, last results,
// the live edge), its commands and its limits form. Methods of the console (PitConsole),
// kept here and installed on it by pit.js: `this` is the console.

import { ALARM_WORDS, fillTexts, LABELS } from "./board/labels.js";
import { cardsLeft } from "./board/state.js";
import {
  alarmActions,
  betWords,
  dealHint,
  LIMIT_BETS,
  limitsBody,
  notices,
  openAlarms,
  tableActions,
} from "./console.js";
import { element } from "./dom.js";
import { edgeText } from "./edge.js";
import { LETTER } from "./floor_view.js";
import { PIT } from "./pit_labels.js";
import { articleWords, kindWords } from "./words.js";

const SHOWN_RESULTS = 12;
const SHOWN_NOTICES = 3;

export const tableView = {
  setLimits(table, card) {
    const figures = {};
    for (const bet of LIMIT_BETS) {
      figures[bet] = {
        min: card.limitInputs[bet].min.value,
        max: card.limitInputs[bet].max.value,
      };
    }
    const made = limitsBody(table, figures, this.operator, card.currency.value, Date.now() / 1000);
    const status = card.limitsStatus;
    if (made.error) {
      status.textContent = this.say(made.error);
      status.dataset.state = "error";
      return;
    }
    status.textContent = this.t("sending");
    status.dataset.state = "sending";
    const topic = `${this.config.prefix}/${table}/limits`;
    this.client.publish(topic, JSON.stringify(made.body), { qos: 1, retain: true }, (error) => {
      status.dataset.state = error ? "error" : "sent";
      status.textContent = error
        ? this.t("not_set", { why: error.code === 135 ? PIT.not_authorized : error.message })
        : this.t("limits_set");
      card.limitsDirty = false;
    });
  },

  newCard(table) {
    const summary = element("dl", { class: "summary" });
    const alarms = element("div", { class: "alarms" });
    const actions = element("div", { class: "actions" });
    const board = element("a", {
      class: "board-link",
      href: `board/?table=${encodeURIComponent(table)}&prefix=${encodeURIComponent(this.config.prefix)}&view=pit`,
      target: "_blank",
      textContent: this.t("live_board"),
    });
    // A link, not a button: reading the history is not a command, open to every account.
    const history = element("a", {
      class: "history-link", href: "#", textContent: this.t("history"),
      title: this.t("history_link_title", { table }),
    });
    history.addEventListener("click", (event) => {
      event.preventDefault();
      this.showHistory(table);
    });
    const limitInputs = {};
    const limitRows = LIMIT_BETS.map((bet) => {
      limitInputs[bet] = {
        min: element("input", { inputMode: "numeric", "data-limit": `${bet}-min`, size: 7 }),
        max: element("input", { inputMode: "numeric", "data-limit": `${bet}-max`, size: 9 }),
      };
      return element("label", { class: "limit" }, `${this.say(betWords(bet))} `, limitInputs[bet].min, "–", limitInputs[bet].max);
    });
    const currency = element("input", { "data-limit": "currency", size: 4, placeholder: "HKD" });
    const limitsStatus = element("span", { class: "limits-status", "data-state": "" });
    const setButton = element("button", { type: "submit", textContent: this.t("set_limits"), "data-action": "limits" });
    const limitsForm = element(
      "form", { class: "limits-form" },
      element("span", { class: "caption", textContent: this.t("limits") }),
      ...limitRows, element("label", { class: "limit" }, `${this.t("currency")} `, currency), setButton, limitsStatus,
    );
    const card = {
      root: element(
        "section", { class: "table-card", "data-table": table },
        element("header", {}, element("h2", { textContent: table }),
          element("span", { class: "pill controller", "data-controller": "unknown" }), history, board),
        summary, alarms, actions, limitsForm,
      ),
      summary, alarms, actions, limitInputs, currency, limitsStatus, setButton,
      limitsDirty: false, drawnLimits: undefined, drawnAlarms: undefined, drawnKey: "",
    };
    limitsForm.addEventListener("input", () => {
      card.limitsDirty = true;
    });
    limitsForm.addEventListener("submit", (event) => {
      event.preventDefault();
      this.setLimits(table, card);
    });
    return card;
  },

  /** EZ Baccarat's side bets in a result: "Dragon 7 won · Panda 8 lost · Banker bet pushed". */
  sideBetsText(result) {
    const parts = Object.entries(result.sideBets).map(([name, won]) => {
      const bet = LABELS[name] ? this.say(LABELS[name]) : name;
      return won ? this.t("side_bet_won", { bet }) : this.t("side_bet_lost", { bet });
    });
    if (result.bankerPush) parts.push(this.t("banker_push_fact"));
    return parts.join(" · ") || "–";
  },

  drawCard(table, state, card) {
    const root = card.root;
    const controller = state.controller || "unknown";
    root.dataset.controller = controller;
    const pill = root.querySelector(".pill.controller");
    pill.dataset.controller = controller;
    pill.textContent = controller === "online" || controller === "offline"
      ? this.say(LABELS[controller]) : this.t("no_status");
    const shoe = state.shoe;
    const live = state.live;
    const left = cardsLeft(state);
    const results = state.results.slice(-SHOWN_RESULTS);
    const phase = (name, key) => (PIT[`${name}_${key}`] ? this.t(`${name}_${key}`) : String(key).replaceAll("_", " "));
    const facts = [
      ["shoe", this.say(LABELS.shoe), shoe ? `${shoe.shoe} (${phase("phase", shoe.phase)})` : "–"],
      ["round", this.say(LABELS.round), live ? `${live.round} ${phase("round", live.status)}` : "–"],
      ["cards_left", this.say(LABELS.cards_left), left === null ? "–" : String(left)],
      ["demo", this.say(LABELS.demo), shoe && shoe.demo ? this.t("demo_on") : this.t("demo_off")],
      ["alarms", this.t("open_alarms_fact"), String(openAlarms(state).length)],
      ["results", this.t("last_results"), results.map((r) => (LETTER[r.winner] ? this.say(LETTER[r.winner]) : "?")).join(" ") || "–"],
      ["edge", this.t("player_edge"), edgeText((this.state.edges || {})[table], this.lang)],
    ];
    const newest = state.results[state.results.length - 1];
    if (newest && newest.sideBets) facts.push(["side_bets", this.t("last_side_bets"), this.sideBetsText(newest)]);
    if (state.rejected) facts.push(["rejected", this.t("bad_bodies"), String(state.rejected)]);
    const key = JSON.stringify(facts);
    if (key !== card.drawnKey) {
      card.drawnKey = key;
      card.summary.replaceChildren(
        ...facts.map(([name, caption, value]) =>
          element("div", { "data-fact": name }, element("dt", { textContent: caption }), element("dd", { textContent: value }))),
      );
    }
    root.dataset.alarms = String(openAlarms(state).length);
    root.dataset.round = live ? String(live.round) : "";
    root.dataset.roundStatus = live ? live.status : "";
    const allowed = this.allowed();
    const rightsKey = `${allowed}`;
    if (state.alarms !== card.drawnAlarms || card.alarmsRights !== rightsKey || this.state.notes !== card.drawnNotes) {
      card.drawnAlarms = state.alarms;
      card.alarmsRights = rightsKey;
      card.drawnNotes = this.state.notes;
      card.alarms.replaceChildren(
        ...openAlarms(state).map((alarm) => this.alarmItem(table, alarm, allowed)),
        ...notices(state).slice(-SHOWN_NOTICES).map((alarm) => this.noticeItem(alarm)));
    }
    const actions = tableActions(state);
    const actionsKey = JSON.stringify([actions.map((a) => a.text), allowed, this.lang]);
    if (actionsKey !== card.actionsKey) {
      card.actionsKey = actionsKey;
      card.actions.replaceChildren(...actions.map((action) => this.button(table, action, allowed, action.key)));
    }
    card.setButton.disabled = !allowed;
    for (const inputs of Object.values(card.limitInputs)) {
      inputs.min.disabled = !allowed;
      inputs.max.disabled = !allowed;
    }
    card.currency.disabled = !allowed;
    if (state.limits !== card.drawnLimits && !card.limitsDirty) {
      card.drawnLimits = state.limits;
      for (const bet of LIMIT_BETS) {
        card.limitInputs[bet].min.value = state.limits ? String(state.limits[bet].min) : "";
        card.limitInputs[bet].max.value = state.limits ? String(state.limits[bet].max) : "";
      }
      card.currency.value = state.limits && state.limits.currency ? state.limits.currency : "";
    }
    root.dataset.limits = state.limits ? JSON.stringify(state.limits) : "";
  },

  alarmItem(table, alarm, allowed) {
    const hint = dealHint(alarm);
    const article = articleWords(alarm);
    return element(
      "article", {
        class: "alarm", "data-alarm-id": String(alarm.id), "data-kind": alarm.kind,
        "data-count": String(alarm.count || 1),
      },
      element("div", { class: "alarm-head" },
        element("b", { textContent: this.say(kindWords(alarm.kind)) }),
        article ? element("span", { class: "article", textContent: this.say(article) }) : null,
        alarm.round ? element("span", { textContent: this.t("in_round", { n: alarm.round }) }) : null,
        (alarm.count || 1) > 1 ? element("span", { class: "count", textContent: this.t("cards_count", { n: alarm.count }) }) : null),
      // the controller's own text, in English (the sentence above is in the page's language)
      element("p", { class: "alarm-text", lang: "en", textContent: alarm.text }),
      this.heldCards(alarm),
      hint ? element("p", { class: "hint", textContent: this.say(hint) }) : null,
      this.alarmButtons(table, alarm, allowed),
      this.noteOf(table, alarm),
    );
  },

  alarmButtons(table, alarm, allowed) {
    return element("div", { class: "alarm-actions" },
      ...alarmActions(alarm).map((action) =>
        this.button(table, action, allowed, action.bulk ? "bulk" : action.command, alarm)));
  },

  /** A one-off notice (shoe_refused ...): not open, nothing to settle; shown, not counted. */
  noticeItem(alarm) {
    return element("article", { class: "notice", "data-alarm-id": String(alarm.id), "data-kind": alarm.kind },
      element("b", { textContent: this.say(kindWords(alarm.kind)) }), " ",
      element("span", { lang: "en", textContent: alarm.text }));
  },

  /** The cards an alarm holds aside: how many, the codes folded away (there may be 86). */
  heldCards(alarm) {
    const cards = (alarm.cards && alarm.cards.length ? alarm.cards : alarm.card ? [alarm.card] : [])
      .map((c) => c || "unreadable");
    if (!cards.length) return null;
    const count = cards.length === 1 ? ALARM_WORDS.held_one : fillTexts(ALARM_WORDS.held, { n: cards.length });
    return element("details", { class: "alarm-cards", "data-held": String(cards.length) },
      element("summary", { textContent: this.say(count) }),
      element("span", { class: "card-codes", textContent: cards.join(" ") }));
  },
};
