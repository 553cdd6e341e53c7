"""What really happened on a simulated table, and a pit boss who settles alarms late.

Shared by the engine-level property test (``tests/controller/engine/test_dealer_and_slow_pit.py``)
and the end-to-end one through the real daemon (``tests/drivers/test_board_shows_the_table.py``).
Bodies are the published JSON objects (dicts), as a board receives them.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from baccarat.drivers.events import CardDrawn
from baccarat.rules.tableau import winner
from baccarat.sim_hardware.dealer import Step

HANDS = ("P1", "B1", "P2", "B2", "P3", "B3")
BURNABLE = frozenset({"extra_card", "card_before_open", "open_in_round", "unreadable_card"})
Body = dict[str, Any]


def dealt_rounds(steps: Iterable[Step]) -> dict[int, tuple[list[str], list[str]]]:
    """The dealer's rounds: number -> (player's cards, banker's cards), as he dealt them."""
    hands: dict[int, dict[str, str]] = {}
    for step in steps:
        if step.role in HANDS and isinstance(step.event, CardDrawn):
            hands.setdefault(step.round_no, {})[step.role] = step.event.card.code
    return {
        number: ([h[p] for p in HANDS if p in h and p[0] == "P"],
                 [h[p] for p in HANDS if p in h and p[0] == "B"])
        for number, h in hands.items()
    }


def not_burned(steps: Iterable[Step], bodies: Iterable[Body]) -> set[str]:
    """Cards the controller burned more copies of than the dealer did: one is a hand's card.

    What a pit who looks at the discard sees (the dealer's burns and the extra cards the pit
    sent there, against the controller's ``burn`` card bodies).
    """
    table = Counter(s.event.card.code for s in steps
                    if s.role in ("burn", "extra") and isinstance(s.event, CardDrawn))
    shown = Counter(b["card"] for b in bodies
                    if b.get("type") == "card" and b["position"] == "burn" and b.get("card"))
    return {code for code, count in shown.items() if count > table[code]}


def correction(
    alarm: Body, rounds: dict[int, Body], not_burned: Collection[str] = ()
) -> list[tuple[str, bytes]]:
    """The commands a pit boss who has looked at the table sends for ``alarm``.

    Cards held aside are burned, one command each, by the alarm's id (an extra card, a
    card before open, the cards before an ``open`` pressed in a round). A foreign card in
    a round is never replaced by the simulated dealer, so the cards after it are in the
    wrong places: the round is voided; and so is a round with a card missing. A wrong
    declared result is declared again as the cards show it (the round's latest ``round``
    body), and so is a round dealt without its burn (``burn_skipped``: its cards are the
    hands he dealt), once it is complete: nothing yet (look again) before.
    ``burn_incomplete`` is the dealer's to settle: he burns on. An ``extra_burn`` (a burn
    press no burn was due for): the pit looks at the discard (``burned``, the cards the
    dealer burned): the card is there, so the round is declared as its cards show once it
    is complete, like ``burn_skipped``; it is not (``not_burned``: a press with no card),
    so the hands are one card off and the round is voided.
    """
    kind = alarm["kind"]
    held = int(alarm.get("count") or 1)
    if kind == "foreign_card" and alarm.get("round") is not None:
        return [("void", json.dumps({"reason": "foreign card not replaced"}).encode())]
    if kind in BURNABLE or kind == "foreign_card":
        return [("accept_as_burn", json.dumps({"alarm": alarm["id"]}).encode())] * held
    if kind == "missing_card":
        return [("void", json.dumps({"reason": "a card was missing"}).encode())]
    if kind == "extra_burn" and alarm.get("card") in not_burned:
        return [("void", json.dumps({"reason": "a burn press with no burn card"}).encode())]
    shown_round = rounds.get(alarm.get("round"), {})
    due = shown_round.get("next") or not shown_round.get("cards")
    if kind in ("burn_skipped", "extra_burn") and due:
        return []  # a card is still due: the dealer deals the round to its end first
    if kind in ("result_mismatch", "burn_skipped", "extra_burn") and alarm.get("round") in rounds:
        shown = rounds[alarm["round"]]
        player, banker = shown.get("player_total"), shown.get("banker_total")
        if player is None or banker is None:
            return []
        return [("declare", json.dumps({"winner": winner(player, banker)}).encode())]
    return []


def standing_results(bodies: Iterable[Body]) -> list[Body]:
    """Every ``result`` not voided afterwards, each once (by ``seq``)."""
    bodies = list(bodies)
    voided = {b["round_id"] for b in bodies if b.get("type") == "void"}
    by_seq = {b["seq"]: b for b in bodies if b.get("type") == "result"}
    return [b for _, b in sorted(by_seq.items()) if b["round_id"] not in voided]


def check(
    bodies: Sequence[Body],
    steps: Sequence[Step],
    mistakes_made: Sequence[tuple[int, str]],
    *,
    pausing: bool,
    burns_evidenced: bool = False,
) -> int:
    """Assert what the board shows is what happened; return the results checked.

    Every result published and not voided has the cards of a round the dealer dealt, and
    no round of his is published twice. With a dealer who pauses on alarms, every round he
    dealt without a mistake (an extra card after it and a wrong declare are outside its
    cards) is published, unless one of its cards went to the discard, is the shoe's copy of
    a card a "foreign" mistake had already brought in, or came after the shoe had ended.

    The one named risk (docs/operators.md, "Rule profiles"): where the dealer's burn press is not
    required (``burns_evidenced`` false), a round burn card the dealer skips leaves no trace
    in the cards, and that round is dealt one card off.
    """
    dealt = dealt_rounds(steps)
    real = {(tuple(p), tuple(b)): number for number, (p, b) in dealt.items()}
    mistakes: dict[int, set[str]] = {}
    for number, mistake in mistakes_made:
        mistakes.setdefault(number, set()).add(mistake)
    unburned = [] if burns_evidenced else [
        set(p + b) for n, (p, b) in dealt.items() if "skipped_burn" in mistakes.get(n, ())
    ]
    matched: list[int] = []
    results = standing_results(bodies)
    for result in results:
        hands = (tuple(result["player"]["cards"]), tuple(result["banker"]["cards"]))
        if hands not in real and any({*hands[0], *hands[1]} <= cards for cards in unburned):
            continue
        assert hands in real, (
            f"round {result['round']} published {result['winner']} with {hands}: no round "
            f"on the table had these cards (the dealer's mistakes: {mistakes})"
        )
        matched.append(real[hands])
    assert len(matched) == len(set(matched)), "one round of the table published twice"
    if pausing:
        burned = {b["card"] for b in bodies if b.get("type") == "card" and b["position"] == "burn"}
        foreign = {s.event.card.code for s in steps
                   if s.mistake == "foreign_card" and isinstance(s.event, CardDrawn)}
        # after a shifted cut-card round (the named risk) the shoe may end a round early
        after_end = {b["card"] for b in bodies
                     if b.get("type") == "alarm" and b["kind"] == "shoe_closed"}
        for number, (player, banker) in dealt.items():
            clean = mistakes.get(number, set()) <= {"extra_card", "wrong_declare"}
            spoiled = (burned | foreign | after_end) & {*player, *banker}
            if clean and player and banker and not spoiled:
                assert number in matched, (
                    f"the dealer's round {number} ({player} {banker}) was dealt without a "
                    f"mistake and is lost (the dealer's mistakes: {mistakes})"
                )
    return len(results)
