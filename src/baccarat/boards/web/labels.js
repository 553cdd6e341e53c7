// Every text the board shows, in English and in Traditional Chinese (as on Macau tables).
// An element with data-label="key" gets both; the page's language mode (both, en, zh)
// shows one or both by CSS.

export const LABELS = {
  title: ["Baccarat", "百家樂"],
  table: ["Table", "枱"],
  shoe: ["Shoe", "靴"],
  round: ["Round", "局"],
  banker: ["Banker", "莊"],
  player: ["Player", "閒"],
  tie: ["Tie", "和"],
  banker_wins: ["Banker wins", "莊贏"],
  player_wins: ["Player wins", "閒贏"],
  tie_result: ["Tie", "和局"],
  banker_pair: ["Banker pair", "莊對"],
  player_pair: ["Player pair", "閒對"],
  natural: ["Natural", "例牌"],
  live_round: ["This round", "本局"],
  last_result: ["Last result", "上局結果"],
  waiting: ["Waiting for the first round", "等待開局"],
  void: ["Void", "作廢"],
  demo: ["Demo", "示範"],
  bead_plate: ["Bead plate", "珠盤路"],
  big_road: ["Big road", "大路"],
  big_eye_boy: ["Big eye boy", "大眼仔"],
  small_road: ["Small road", "小路"],
  cockroach_pig: ["Cockroach pig", "曱甴路"],
  ask: ["Ask the roads", "問路"],
  banker_ask: ["If banker", "莊問路"],
  player_ask: ["If player", "閒問路"],
  statistics: ["Statistics", "統計"],
  rounds: ["Rounds", "局數"],
  naturals: ["Naturals", "例牌"],
  longest_banker: ["Longest banker run", "莊最長連"],
  longest_player: ["Longest player run", "閒最長連"],
  streak: ["Streak", "連勝"],
  cards_left: ["Cards left", "餘牌"],
  last_round: ["Last round of the shoe", "本靴最後一局"],
  shuffle: ["Shoe closed", "本靴完結"],
  controller: ["Table", "枱"],
  board_link: ["Board", "顯示"],
  online: ["Online", "在線"],
  offline: ["Offline", "離線"],
  connecting: ["Connecting", "連接中"],
  connected: ["Connected", "已連接"],
  lost: ["Reconnecting", "重新連接"],
  unknown: ["Unknown", "未知"],
  alarm: ["Alarm", "警報"],
  alarms: ["Alarms", "警報"],
  no_table: ["No table chosen: open this page with ?table=ID", "未選枱：請以 ?table=ID 開啟"],
  language: ["中文", "EN"],
};

// The alarm kinds of the controller (messages.py AlarmKind), for the banner.
export const ALARM_KINDS = {
  extra_card: ["Extra card", "多出一張牌"],
  missing_card: ["Missing card", "缺牌"],
  card_before_open: ["Card before the round opened", "開局前出牌"],
  foreign_card: ["Foreign card", "外來牌"],
  unreadable_card: ["Unreadable card", "無法讀取的牌"],
  result_mismatch: ["Result mismatch", "結果不符"],
  burn_incomplete: ["Burn incomplete", "燒牌未完成"],
  shoe_closed: ["Card after the shoe ended", "牌靴完結後出牌"],
  demo_limit: ["Demo limit reached", "示範局數已滿"],
  link_down: ["Shoe link down", "牌靴連線中斷"],
  device_fault: ["Device fault", "裝置故障"],
  bad_data: ["Bad data from the shoe", "牌靴資料錯誤"],
  journal_damaged: ["Journal damaged", "記錄損壞"],
};

export const LANGUAGES = ["both", "en", "zh"];

/** A <span class="en"> and a <span class="zh"> with the two texts of `pair`. */
export function bilingual(doc, pair) {
  const fragment = doc.createDocumentFragment();
  const [en, zh] = pair;
  for (const [cls, text] of [["en", en], ["zh", zh]]) {
    const span = doc.createElement("span");
    span.className = cls;
    span.textContent = text;
    fragment.append(span);
  }
  return fragment;
}

export function label(doc, key) {
  return bilingual(doc, LABELS[key] || [key, key]);
}

/** Fill every element with a data-label attribute under `root`. */
export function applyLabels(root) {
  for (const element of root.querySelectorAll("[data-label]")) {
    element.replaceChildren(label(root.ownerDocument || root, element.dataset.label));
  }
}
