"""The alarms the engine raises: the words each one says (its row: ``rules/alarm_kinds.py``)."""

from __future__ import annotations

from typing import Final, cast, get_args

from baccarat.controller.engine.inputs import DeviceReportKind
from baccarat.messages.bodies import Correction
from baccarat.rules import alarm_kinds
from baccarat.rules.alarm_kinds import KINDS, AlarmKind
from baccarat.rules.tableau import Winner

ARTICLE: Final[dict[AlarmKind, str]] = {kind: row.article for kind, row in KINDS.items()}
"""The article of the rules (or ``device``) that each kind of alarm cites (the table's)."""

DEVICE_ALARM: Final[dict[DeviceReportKind, AlarmKind]] = {
    cast("DeviceReportKind", row.report): kind
    for kind, row in KINDS.items() if row.report is not None
}
"""The alarm a device report raises (``link_up`` clears ``link_down`` instead, and
``publish_accepted`` clears ``publish_refused``)."""

LASTING: Final[frozenset[AlarmKind]] = alarm_kinds.LASTING
"""Alarms with no correction that stay open until their device recovers (``link_up``).

They and every alarm with corrections (open until settled) are the open alarms of the
retained ``alarms`` topic; any other alarm is a one-off notice and is never open.
"""

NOTED: Final[frozenset[DeviceReportKind]] = frozenset({"hello"})
"""Device reports the journal keeps and the engine takes no action on: a device's power-up
(its session, for the next restart: PROTOCOL.md 6.4)."""

RECOVERS: Final[dict[DeviceReportKind, DeviceReportKind]] = {
    cast("DeviceReportKind", row.recovery): cast("DeviceReportKind", row.report)
    for row in KINDS.values() if row.recovery is not None
}
"""The report that ends each lasting alarm: report -> the report that raised it."""

if not {*DEVICE_ALARM, *RECOVERS} <= set(get_args(DeviceReportKind)):  # pragma: no cover
    raise ImportError("alarm_kinds: a row names a device report that inputs.py does not know")

MISSING_CARD: Final = "missing_card"
CARD_BEFORE_OPEN: Final = "card_before_open"
OPEN_IN_ROUND: Final = "open_in_round"
BURN_INCOMPLETE: Final = "burn_incomplete"
BURN_SKIPPED: Final = "burn_skipped"
EXTRA_BURN: Final = "extra_burn"
"""The kinds that more than one room of the engine raises or looks for (a room that alone
deals with a kind writes it where it raises it)."""

LISTED_AT_MOST: Final = 3
"""Alarms, or cards, that a text names before it says "and N more"."""

HELD_IN_ROUND: Final[list[Correction]] = ["accept_as_burn", "void"]
"""The corrections of a card held aside by a round."""
HELD_OUTSIDE_ROUND: Final[list[Correction]] = ["accept_as_burn"]
"""The corrections of a card held aside when no round is open: no round to void."""


def journal_lost(first: int, last: int) -> str:
    """The journal lost the inputs of messages ``first`` to ``last`` (a restart found it)."""
    count = last - first + 1
    return (
        f"the journal lost the inputs of {count} message(s) already made, seq {first} to "
        f"{last} (storage that lost flushed records, or a damaged tail): they may have been "
        f"published; any card among them is lost. Numbering goes on at seq {last + 1}, "
        "never reusing one; the journal's earlier records are intact"
    )


def card_name(code: str | None) -> str:
    """How a text names a card: its code, or what it is if the shoe could not read it."""
    return code if code is not None else "an unreadable card"


def extra_card(code: str | None, round_number: int) -> str:
    """A card when the round is complete."""
    return (
        f"{card_name(code)} came out but round {round_number} is complete: "
        "no card is due (Art. 9)"
    )


def extra_before_open(code: str | None, round_number: int) -> str:
    """Explicit opening: a card after a complete round and before ``open``."""
    return (
        f"{card_name(code)} came out after round {round_number} was complete and before "
        "'open': a third card against the tableau, or the next round dealt without 'open'"
    )


def card_before_open(code: str | None) -> str:
    """Explicit opening: a card before the first round of the shoe is opened."""
    return f"{card_name(code)} came out before the round was opened"


def open_in_round(round_number: int, held: list[str], burns: int, declared: str | None) -> str:
    """``open`` while the round has cards and is not complete: what came before the press."""
    if held:
        cards = named(held)
        what = f"{cards} held aside: the last round's extra card(s), or a round left unfinished"
        then = "burn them (accept_as_burn) or void the round"
    else:
        what = f"{burns} burn card(s) before it are in the discard"
        then = "its burn starts again"
    kept = f"; the dealer's 'declare {declared}' was for those cards" if declared else ""
    return (
        f"'open' while round {round_number} had cards and was not complete: {what}{kept}. "
        f"The round starts again from its first card: {then}"
    )


def foreign_card(code: str, decks: int) -> str:
    """One more of a card than the shoe holds."""
    article = "an" if decks in (8, 11, 18) else "a"  # said "an eight", "an eleven"
    return (
        f"{code} is one more than the {decks} of it that {article} {decks}-deck shoe holds: "
        "a foreign or duplicate card"
    )


def unreadable_card(*, face_up_burn: bool) -> str:
    """The shoe could not read a card whose face matters."""
    what = "the face-up burn card" if face_up_burn else "a card"
    return f"the shoe could not read {what}; it is held aside until corrected"


def missing_card(round_number: int, due: str, signal: str) -> str:
    """``reveal`` or ``declare`` while a card is still due."""
    return f"'{signal}' in round {round_number} while {due} is still due by the tableau"


def result_mismatch(
    declared: Winner, winner: Winner, player: int, banker: int, *, kept: bool = False
) -> str:
    """The dealer declared another winner than the cards make (``kept``: before them)."""
    when = " before the round was complete" if kept else ""
    return (
        f"declared {declared}{when} but the cards say {winner} "
        f"(player {player}, banker {banker})"
    )


def missing_card_checked(text: str, press: str) -> str:
    """A ``missing_card`` a card may no longer settle: a press came after it."""
    return (
        f"{text}; '{press}' came after it, so the card that comes is no proof: "
        "a person checks the round (declare the winner the cards show, or void)"
    )


def burn_left(due: int | None) -> str:
    """The cards still to burn; ``None``: the face-up first card is awaited."""
    return "the face-up first card" if due is None else f"{due} more card(s)"


def burn_incomplete(due: int | None) -> str:
    """``open`` before the burn is complete."""
    return (
        f"'open' before the burn was complete: burn {burn_left(due)} first, then open "
        "(the alarm clears with the last burn card)"
    )


def shoe_closed(shoe_number: int | None) -> str:
    """A card when no shoe is in play."""
    if shoe_number is None:
        return "a card came out but no shoe is in play"
    return f"a card came out after shoe {shoe_number} ended"


def demo_limit(played: int, allowed: int) -> str:
    """``demo on`` when the shoe's demonstration rounds are used up (Art. 2.2)."""
    return (
        f"{played} demonstration rounds already played in this shoe; "
        f"at most {allowed} are allowed"
    )


def shoe_refused(reason: str) -> str:
    """A new shoe (the ``shoe`` command, or the device's shoe inserted) that cannot start."""
    return f"a new shoe was refused: {reason}"


def burn_skipped(round_no: int, burns: int) -> str:
    """A round dealt without the dealer's burn press (``burn_press`` required)."""
    what = "its burn card" if burns == 1 else f"its {burns} burn cards"
    return (
        f"round {round_no} was dealt without the dealer's burn button: {what} taken as "
        "skipped and the cards as its hands'; check the table, then declare the winner "
        "the cards show, or void"
    )


def extra_burn(round_no: int, card: str | None, where: str) -> str:
    """A card burned on a burn press the procedure did not call for (``burn_press`` required).

    The press is evidence: the next card is a burn card. The pit confirms the deviation.
    """
    what = f"the card {card}" if card else "the next card (unreadable)"
    return (
        f"the dealer pressed burn {where} in round {round_no}, where the procedure burns no "
        f"card: {what} was taken as a burn card, not dealt; check the table: if it was "
        "burned, declare the winner the cards show; if no card was burned (a press with no "
        "card), void the round"
    )


def signal_refused(signal: str, reason: str) -> str:
    """A press of the dealer's, or the shoe's cut card, that the engine could not take."""
    return f"{signal} was refused: {reason}"


def advantage(bet: str, player_edge: float, threshold: float, cards_out: int) -> str:
    """A bet that favours the bettor on the cards left (the edge watch's crossing)."""
    return (
        f"{bet.replace('_', ' ')}: player edge {player_edge:+.2%} per unit staked on the "
        f"cards left after {cards_out} out, at or above the table's {threshold:+.2%}: "
        "watch large bets on it"
    )


def shuffle_suspect(
    table: str, shoe: int, earlier: tuple[int, int], now: tuple[int, int], *, cards: int,
    gap: str,
) -> str:
    """This shoe's cards repeat a run of an earlier shoe's, in order (a notice)."""
    kind, _, where = gap.partition(":")
    with_gap = {
        "extra": f", but for card {where} of this shoe",
        "missing": f", but for card {where} of that shoe, missing here",
        "different": f", but for card {where}, not that shoe's in its place",
    }.get(kind, "")
    return (
        f"cards {now[0]}-{now[1]} of this shoe repeat cards {earlier[0]}-{earlier[1]} of "
        f"table {table}'s shoe {shoe} in the same order ({cards} cards alike{with_gap}): "
        "far beyond chance for a shuffled shoe (a false shuffle, or cards carried over); "
        "surveillance checks it, play goes on"
    )


def named(items: list[str]) -> str:
    """At most :data:`LISTED_AT_MOST` items, then how many more: texts stay short."""
    shown = ", ".join(items[:LISTED_AT_MOST])
    more = len(items) - LISTED_AT_MOST
    return f"{shown} and {more} more" if more > 0 else shown


def coalesced(text: str, codes: list[str | None]) -> str:
    """The text of an alarm that cards were coalesced into: its first text, then its cards."""
    held = "1 card" if len(codes) == 1 else f"{len(codes)} cards"
    return f"{text}; {held} held aside now: {named([card_name(c) for c in codes])}"


def listed(open_alarms: list[tuple[int, AlarmKind, int]]) -> str:
    """Alarms (id, kind, cards held) as a refusal names them, e.g. ``#4 extra_card``."""
    return named([f"#{n} {kind}" + _cards_held(held) for n, kind, held in open_alarms])


def _cards_held(held: int) -> str:
    return f" ({held} cards)" if held > 1 else ""
