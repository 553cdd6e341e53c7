// Every text the board shows, in English, Traditional Chinese (as on Macau tables) and
// Simplified Chinese. An element with data-label="key" gets all three, each in a span of
// its own (class en, zh hant, zh hans); the page's language mode shows one or two of them
// by CSS (body classes lang-both|lang-en|lang-zh and script-hant|script-hans).

export const LABELS = {
  title: ["Baccarat", "百家樂", "百家乐"],
  table: ["Table", "枱", "台"],
  shoe: ["Shoe", "靴", "靴"],
  round: ["Round", "局", "局"],
  banker: ["Banker", "莊", "庄"],
  player: ["Player", "閒", "闲"],
  tie: ["Tie", "和", "和"],
  banker_wins: ["Banker wins", "莊贏", "庄赢"],
  player_wins: ["Player wins", "閒贏", "闲赢"],
  tie_result: ["Tie", "和局", "和局"],
  banker_pair: ["Banker pair", "莊對", "庄对"],
  player_pair: ["Player pair", "閒對", "闲对"],
  natural: ["Natural", "例牌", "例牌"],
  dragon7: ["Dragon 7", "龍7", "龙7"],
  panda8: ["Panda 8", "熊貓8", "熊猫8"],
  banker_push: ["Banker bet pushes", "莊注退回", "庄注退回"],
  live_round: ["This round", "本局", "本局"],
  last_result: ["Last result", "上局結果", "上局结果"],
  waiting: ["Waiting for the first round", "等待開局", "等待开局"],
  void: ["Void", "作廢", "作废"],
  demo: ["Demo", "示範", "示范"],
  bead_plate: ["Bead plate", "珠盤路", "珠盘路"],
  big_road: ["Big road", "大路", "大路"],
  big_eye_boy: ["Big eye boy", "大眼仔", "大眼仔"],
  small_road: ["Small road", "小路", "小路"],
  cockroach_pig: ["Cockroach pig", "曱甴路", "蟑螂路"],
  ask: ["Ask the roads", "問路", "问路"],
  banker_ask: ["If banker", "莊問路", "庄问路"],
  player_ask: ["If player", "閒問路", "闲问路"],
  statistics: ["Statistics", "統計", "统计"],
  rounds: ["Rounds", "局數", "局数"],
  naturals: ["Naturals", "例牌", "例牌"],
  longest_banker: ["Longest banker run", "莊最長連", "庄最长连"],
  longest_player: ["Longest player run", "閒最長連", "闲最长连"],
  streak: ["Streak", "連勝", "连胜"],
  cards_left: ["Cards left", "餘牌", "余牌"],
  last_round: ["Last round of the shoe", "本靴最後一局", "本靴最后一局"],
  last_round_short: ["Last round", "最後一局", "最后一局"],
  limits: ["Limits", "限紅", "限红"],
  pairs: ["Pairs", "對子", "对子"],
  shuffle: ["Shoe closed", "本靴完結", "本靴完结"],
  shuffle_short: ["Closed", "完結", "完结"],
  controller: ["Table", "枱", "台"],
  board_link: ["Board", "顯示", "显示"],
  online: ["Online", "在線", "在线"],
  offline: ["Offline", "離線", "离线"],
  connecting: ["Connecting", "連接中", "连接中"],
  connected: ["Connected", "已連接", "已连接"],
  lost: ["Reconnecting", "重新連接", "重新连接"],
  unknown: ["Unknown", "未知", "未知"],
  alarm: ["Alarm", "警報", "警报"],
  alarms: ["Alarms", "警報", "警报"],
  // templates, filled by fill(): {a} an article, {n} a number
  article: ["Art. {a}", "第{a}條", "第{a}条"],
  device_article: ["device", "裝置", "设备"],
  round_number: ["Round {n}", "第{n}局", "第{n}局"],
  more_alarms: ["+{n} more", "另有{n}項", "另有{n}项"],
  // what players see while an alarm awaits the pit (?view=pit shows the alarms themselves)
  notice_round: ["Please wait: the round is being checked", "請稍候：本局正在核對", "请稍候：本局正在核对"],
  notice_table: ["Please wait: the table is being checked", "請稍候：本枱正在檢查", "请稍候：本台正在检查"],
  // the full-screen notice while the controller is offline or the board lost its broker
  offline_title: ["Table offline", "本枱離線", "本台离线"],
  offline_text: [
    "Results will show again when the table is back online",
    "本枱恢復連線後將再次顯示結果",
    "本台恢复连线后将再次显示结果",
  ],
  link_title: ["Board not connected", "顯示器未連接", "显示器未连接"],
  link_text: [
    "Reconnecting: the results shown may be out of date",
    "重新連接中：所顯示結果可能並非最新",
    "重新连接中：所显示结果可能并非最新",
  ],
  no_table: [
    "No table chosen: open this page with ?table=ID",
    "未選枱：請以 ?table=ID 開啟",
    "未选台：请以 ?table=ID 开启",
  ],
  language: ["Language", "語言", "语言"],
};

// The alarm kinds of the controller, for the pit's banner: generated from the one alarm
// table (rules/alarm_kinds.py) into alarm_kinds.js.
export { ALARM_KINDS } from "./alarm_kinds.js";

// The corrections an alarm allows (messages/bodies.py Correction): what the pit's button
// does, as staff say it.
export const CORRECTIONS = {
  accept_as_burn: ["Accept as burn", "當作燒牌", "当作烧牌"],
  void: ["Void the round", "本局作廢", "本局作废"],
  deal: ["Deal the card that is due", "補發應發的牌", "补发应发的牌"],
  declare: ["Declare the winner", "宣佈勝方", "宣布胜方"],
  burn: ["Burn a card", "燒一張牌", "烧一张牌"],
  open: ["Open the round", "開局", "开局"],
};

// The table's own commands in the pit console (the corrections above are commands too).
export const TABLE_COMMANDS = {
  shoe: ["New shoe", "新牌靴", "新牌靴"],
  end: ["End shoe", "結束牌靴", "结束牌靴"],
  demo: ["Demo mode", "示範模式", "示范模式"],
};

// What settled an alarm (alarm_cleared's `by`): every correction, and what else ends one
// (a new shoe or the shoe's end burns the held cards; a device's recovery ends its alarm).
export const SETTLED_BY = {
  accept_as_burn: ["accepted as burn", "已當作燒牌", "已当作烧牌"],
  void: ["the round voided", "本局已作廢", "本局已作废"],
  deal: ["the card dealt", "已補發牌", "已补发牌"],
  declare: ["the winner declared", "已宣佈勝方", "已宣布胜方"],
  burn: ["a card burned", "已燒牌", "已烧牌"],
  open: ["the round opened", "已開局", "已开局"],
  shoe: ["a new shoe", "換新牌靴", "换新牌靴"],
  end: ["the shoe ended", "牌靴已完結", "牌靴已完结"],
  link_up: ["the shoe's link back", "牌靴已重新連線", "牌靴已重新连线"],
  publish_accepted: ["the broker taking messages again", "代理伺服器恢復收訊息", "代理服务器恢复收消息"],
  shoe_hears: ["the shoe hearing the controller again", "牌靴恢復收到控制器訊號", "牌靴恢复收到控制器信号"],
  edge: ["the edge back below the threshold", "優勢回落至門檻以下", "优势回落至门槛以下"],
};

// Who gave a command (alarm_cleared's `origin`, the journal's by=): pit/<operator>, pit,
// the dealer's button; none: the device itself or the cards.
export const ORIGINS = {
  pit: ["the pit console", "賭場主管控制台", "赌场主管控制台"],
  operator: ["{who} at the pit console", "賭場主管控制台 {who}", "赌场主管控制台 {who}"],
  button: ["the dealer's button", "荷官按鈕", "荷官按钮"],
  device: ["the shoe", "牌靴", "牌靴"],
};

// The pit console's sentences about alarms, filled by fillTexts().
export const ALARM_WORDS = {
  settled: ["{kind} #{id}: settled by {by}", "{kind} #{id}：{by}", "{kind} #{id}：{by}"],
  settled_from: ["{kind} #{id}: settled by {by} ({origin})", "{kind} #{id}：{by}（{origin}）", "{kind} #{id}：{by}（{origin}）"],
  open: ["{kind} #{id}: open", "{kind} #{id}：未處理", "{kind} #{id}：未处理"],
  held: ["{n} cards held aside", "扣起{n}張牌", "扣起{n}张牌"],
  held_one: ["1 card held aside", "扣起1張牌", "扣起1张牌"],
  in_round: ["in round {n}", "於第{n}局", "于第{n}局"],
  voided: ["Void", "作廢", "作废"],
  voided_from: ["Void ({origin})", "作廢（{origin}）", "作废（{origin}）"],
};

// The page's language modes: which of the three texts show. `both` is the default; `zh`
// (the name before Simplified Chinese came) still means Traditional Chinese.
export const LANGUAGES = {
  both: { classes: ["lang-both", "script-hant"], html: "en", button: "EN + 繁" },
  en: { classes: ["lang-en", "script-hant"], html: "en", button: "EN" },
  "zh-Hant": { classes: ["lang-zh", "script-hant"], html: "zh-Hant", button: "繁體" },
  "zh-Hans": { classes: ["lang-zh", "script-hans"], html: "zh-Hans", button: "简体" },
  "both-Hans": { classes: ["lang-both", "script-hans"], html: "en", button: "EN + 简" },
};
export const LANGUAGE_ORDER = ["both", "en", "zh-Hant", "zh-Hans", "both-Hans"];
const ALIASES = { zh: "zh-Hant" };

/** The language mode named by a ?lang= value (any case), or null if it names none. */
export function languageMode(value) {
  if (!value) return null;
  const wanted = String(value).trim().toLowerCase();
  if (ALIASES[wanted]) return ALIASES[wanted];
  return LANGUAGE_ORDER.find((mode) => mode.toLowerCase() === wanted) || null;
}

const SPANS = [
  ["en", "en"],
  ["zh hant", "zh-Hant"],
  ["zh hans", "zh-Hans"],
];

/** A span per language (class en, zh hant, zh hans) with the texts of `texts`. */
export function trilingual(doc, texts) {
  const fragment = doc.createDocumentFragment();
  SPANS.forEach(([cls, lang], index) => {
    const span = doc.createElement("span");
    span.className = cls;
    span.lang = lang;
    span.textContent = texts[Math.min(index, texts.length - 1)];
    fragment.append(span);
  });
  return fragment;
}

export function label(doc, key) {
  return trilingual(doc, LABELS[key] || [key]);
}

/** The three texts of a template label with its {placeholders} filled from `values`. */
export function fill(key, values) {
  return fillTexts(LABELS[key], values);
}

/**
 * The three texts of `texts` with their {placeholders} filled: a value is a text, or
 * three texts (one per language, as a label is).
 */
export function fillTexts(texts, values) {
  return texts.map((text, index) =>
    text.replace(/\{(\w+)\}/g, (_, name) => {
      const value = values[name];
      return String(Array.isArray(value) ? value[Math.min(index, value.length - 1)] : value);
    }));
}

/** Fill every element with a data-label attribute under `root`. */
export function applyLabels(root) {
  for (const element of root.querySelectorAll("[data-label]")) {
    element.replaceChildren(label(root.ownerDocument || root, element.dataset.label));
  }
}
