"""The engine's inputs: what the shoe, the dealer and the operator say.

Each is a small frozen value. :func:`parse_input` and :meth:`Input.to_text` are the
one-line notation of ``baccarat replay`` and of the journal; ``parse_input(notation(x),
x.ts) == x`` for every input (:func:`notation` puts the input's origin in front of
:meth:`Input.to_text`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import Literal, get_args

from baccarat.cards import Card, CardError, parse_card
from baccarat.errors import BaccaratError
from baccarat.rules.edge import BETS, Bet
from baccarat.rules.tableau import Winner


@dataclass(frozen=True, slots=True, kw_only=True)
class Input:
    """What every input carries besides its own fields.

    ``ts`` is the time the input arrived (Unix seconds), given by whoever feeds the
    engine: the engine never reads a clock. ``device_seq`` is the frame number of an
    input that came from a ``framed`` device, and ``device_session`` the device's session
    of that frame (PROTOCOL.md 6.4), if known; the engine ignores both and they take no
    part in equality. The journal keeps them, so that frames a device sends again after a
    restart, its HELLO among them, are known as already recorded.
    """

    ts: float | None = None
    device_seq: int | None = field(default=None, compare=False)
    device_session: int | None = field(default=None, compare=False)
    origin: str | None = None
    """Who gave a command: ``pit/<operator>`` (the broker account that sent it),
    ``pit`` (a command on the old topic, with no operator), or ``button`` (the dealer's
    button on the device); ``None`` for what the device itself reports (cards, the cut
    card, a new shoe). Part of the input: messages that settle an alarm or void a round
    name it, so a replay of the journal gives them again."""

    def to_text(self) -> str:
        """The input in the replay notation (without its time)."""
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class DrawCard(Input):
    """A card out of the shoe; ``card`` is ``None`` when the shoe could not read it."""

    card: Card | None

    def to_text(self) -> str:
        """The replay notation of this input."""
        return self.card.code if self.card else "unreadable"


@dataclass(frozen=True, slots=True)
class NewShoe(Input):
    """A new shoe: shuffled, cut, about to be burned (Art. 2.1); ``None``: the profile's decks."""

    decks: int | None = None

    def to_text(self) -> str:
        """The replay notation of this input."""
        return "shoe" if self.decks is None else f"shoe {self.decks}"


@dataclass(frozen=True, slots=True)
class CutCardSeen(Input):
    """The cut card came out of the shoe (Art. 3.1)."""

    def to_text(self) -> str:
        """The replay notation of this input."""
        return "cut"


@dataclass(frozen=True, slots=True)
class OpenRound(Input):
    """Bets are closed; the dealer starts a round."""

    def to_text(self) -> str:
        """The replay notation of this input."""
        return "open"


@dataclass(frozen=True, slots=True)
class AnnounceBurn(Input):
    """The dealer's burn button: the round's burn card comes next.

    Evidence where the profile's ``burn_press`` is ``required``: a round's burn card is
    taken as one only after it (see :class:`~baccarat.rules.profiles.Profile`).
    """

    def to_text(self) -> str:
        """The replay notation of this input."""
        return "announce_burn"


@dataclass(frozen=True, slots=True)
class Reveal(Input):
    """The dealer shows the round: it is finished (and, on squeeze tables, may be shown)."""

    def to_text(self) -> str:
        """The replay notation of this input."""
        return "reveal"


@dataclass(frozen=True, slots=True)
class VoidRound(Input):
    """The round is void (Art. 10): no result, kept in the record.

    A round whose result was already published is voided only with ``confirm``: that
    takes its result off the roads. The notation writes a confirmed void ``void`` (as
    every void was written before confirmation existed, which is what those voids did)
    and an unconfirmed one ``void_unconfirmed``.
    """

    reason: str = "operator"
    confirm: bool = False

    def to_text(self) -> str:
        """The replay notation of this input."""
        head = "void" if self.confirm else "void_unconfirmed"
        return head if self.reason == "operator" else f"{head} {self.reason}"


@dataclass(frozen=True, slots=True)
class AcceptAsBurn(Input):
    """The card an alarm holds aside goes to the discard; play goes on (Art. 10).

    ``alarm``: the alarm whose oldest card it is (the pit's button on that alarm); without
    it, the oldest card any alarm holds.
    """

    alarm: int | None = None

    def to_text(self) -> str:
        """The replay notation of this input."""
        return "accept_as_burn" if self.alarm is None else f"accept_as_burn {self.alarm}"


@dataclass(frozen=True, slots=True)
class Burn(Input):
    """The house burns cards before the next round (Art. 8)."""

    count: int = 1

    def to_text(self) -> str:
        """The replay notation of this input."""
        return "burn" if self.count == 1 else f"burn {self.count}"


@dataclass(frozen=True, slots=True)
class Exposed(Input):
    """The last card dealt came out face up by accident (Art. 4): it stays valid."""

    def to_text(self) -> str:
        """The replay notation of this input."""
        return "exposed"


@dataclass(frozen=True, slots=True)
class Declare(Input):
    """The dealer's result button, checked against the cards."""

    winner: Winner

    def to_text(self) -> str:
        """The replay notation of this input."""
        return f"declare {self.winner}"


@dataclass(frozen=True, slots=True)
class Demo(Input):
    """Demonstration rounds on or off (Art. 2.2)."""

    on: bool

    def to_text(self) -> str:
        """The replay notation of this input."""
        return "demo on" if self.on else "demo off"


@dataclass(frozen=True, slots=True)
class EndShoe(Input):
    """The house ends the shoe between rounds (Art. 3.2)."""

    def to_text(self) -> str:
        """The replay notation of this input."""
        return "end"


@dataclass(frozen=True, slots=True)
class Advantage(Input):
    """The daemon's edge watch: a bet's player edge crossed its threshold, or went back.

    ``on``: the player edge of ``bet`` on the next round is at or above ``threshold`` (the
    bet favours the bettor by that much); off: it is below again. It names what it was
    computed for: the shoe, its last round begun (0 before the first) and the cards of the
    shoe known to be out (held aside and burned ones included), so that the engine refuses
    one computed for other cards than it holds out now. The daemon decides it from the
    edge watch (:mod:`baccarat.controller.edge_watch`); the engine raises or clears the
    ``advantage`` notice. Figures are per unit staked, as written (``repr``).
    """

    bet: Bet
    on: bool
    player_edge: float
    threshold: float
    shoe: int
    round: int
    cards_out: int

    def to_text(self) -> str:
        """The replay notation of this input."""
        return (
            f"advantage {self.bet} {'on' if self.on else 'off'} edge={self.player_edge!r} "
            f"threshold={self.threshold!r} shoe={self.shoe} round={self.round} "
            f"out={self.cards_out}"
        )


SHUFFLE_GAP = re.compile(r"none|(extra|missing|different):[1-9][0-9]{0,3}")
"""A repeat's gap as the notation writes it: ``none``, ``extra:45`` (card 45 of this shoe
is not in the earlier one), ``missing:125`` (card 125 of the earlier shoe is not here),
``different:45`` (card 45 of this shoe is not the earlier one's in its place)."""
_SPAN = re.compile(r"([1-9][0-9]{0,3})-([1-9][0-9]{0,3})")
_TABLE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


@dataclass(frozen=True, slots=True)
class ShuffleSuspect(Input):
    """This shoe's cards repeat, in order, a run of an earlier shoe's (a false shuffle?).

    Found by the daemon's shuffle check (:mod:`baccarat.rules.shuffle_match`) against the
    earlier shoes that the journal's older files hold: outside the engine's inputs, so it
    enters the engine as an input of its own, recorded before its notice is published,
    and a replay gives the notice again from it. Cards ``first``-``last`` of this shoe
    repeat ``earlier_first``-``earlier_last`` of ``table``'s shoe ``shoe`` (positions in
    the order the cards came out, burns included), ``cards`` of them alike, with ``gap``.
    """

    table: str
    shoe: int
    earlier_first: int
    earlier_last: int
    first: int
    last: int
    cards: int
    gap: str = "none"

    def to_text(self) -> str:
        """The replay notation of this input."""
        return (
            f"shuffle_suspect table={self.table} shoe={self.shoe}"
            f" earlier={self.earlier_first}-{self.earlier_last} now={self.first}-{self.last}"
            f" cards={self.cards} gap={self.gap}"
        )


@dataclass(frozen=True, slots=True)
class JournalLost(Input):
    """The journal lost messages already made: numbering goes on past them (the daemon's).

    Decided at a start, outside the engine, from what the daemon persisted apart from the
    journal (the ``seq-mark`` file, the ``published`` cursor) and what the broker holds
    retained for the table (:mod:`baccarat.controller.seq_promise`): messages ``first`` to
    ``last`` were made (and may have been published) from inputs the journal no longer
    holds. The engine continues its numbering after ``last``, so that no ``seq`` is ever
    published with a second body, and raises a lasting ``journal_damaged`` alarm naming
    the range (its ``lost_first`` and ``lost_last``). ``evidence`` names what showed it
    (comma-separated words: ``seq-mark``, ``cursor``, ``broker``).
    """

    first: int
    last: int
    evidence: str = "seq-mark"

    def to_text(self) -> str:
        """The replay notation of this input."""
        return f"journal_lost first={self.first} last={self.last} evidence={self.evidence}"


_EVIDENCE = re.compile(r"[a-z][a-z-]{0,15}(,[a-z][a-z-]{0,15}){0,7}")
"""What showed a loss, as the notation writes it: words joined by commas."""


DeviceReportKind = Literal[
    "link_down", "link_up", "fault", "bad_data", "journal", "restart", "clock", "sequence_gap",
    "publish_refused", "publish_accepted", "shoe_deaf", "shoe_hears", "hello", "outbox_full",
    "replay", "session_reused",
]


@dataclass(frozen=True, slots=True)
class DeviceReport(Input):
    """What the driver says of the device, or the daemon of its journal.

    The link was lost or is back, the device reported a fault, bytes were not a frame, the
    journal had a damaged tail that was cut off at start, or the daemon restarted while a
    round was in progress (``restart``); the broker refuses the table's messages
    (``publish_refused``) or accepts them again (``publish_accepted``); the outbox, full
    after a long broker outage, dropped its oldest messages (``outbox_full``); the device powered
    up (``hello``: recorded, so that a restart knows its session; no alarm); frames of an
    earlier session of the device came again and were refused (``replay``); the device powered
    up reusing a session id (``session_reused``).
    """

    kind: DeviceReportKind
    text: str = ""

    def to_text(self) -> str:
        """The replay notation of this input."""
        text = " ".join(self.text.replace("#", " ").split())  # one line, no comment mark
        return f"device {self.kind} {text}".rstrip()


def unrecordable(text: str) -> str | None:
    """Why a free text (a void reason) would not read back the same from the notation.

    ``None`` if it would. The notation holds one line of printable words separated by
    single spaces, and ``#`` starts a comment in a replay file.
    """
    if not text:
        return "it is empty"
    for position, char in enumerate(text, start=1):
        if char == "#":
            return f"'#' (character {position}) starts a comment in the journal's notation"
        if not char.isprintable():
            return f"U+{ord(char):04X} (character {position}) is not a printable character"
    if text != " ".join(text.split()):
        return "spaces at its ends or two in a row: the journal keeps one space between words"
    return None


class InputError(BaccaratError, ValueError):
    """A line of the replay notation that is not an input."""


ORIGIN = re.compile(r"(pit(/[A-Za-z0-9][A-Za-z0-9_.@-]{0,63})?|button)")
"""An origin as the notation and the journal write it (``by=<origin>``)."""
ORIGIN_PREFIX = "by="


def check_origin(origin: str) -> str:
    """``origin`` if it is one (:data:`ORIGIN`); else :class:`InputError` saying why."""
    if not ORIGIN.fullmatch(origin):
        raise InputError(
            f"bad origin {origin[:80]!r}: pit, pit/<operator> (letters, digits, _ . @ -;"
            " at most 64) or button"
        )
    return origin


def notation(inp: Input) -> str:
    """The input's line in the replay notation, with its origin: ``by=pit/ana void ...``."""
    text = inp.to_text()
    return text if inp.origin is None else f"{ORIGIN_PREFIX}{inp.origin} {text}"


def origin_parts(origin: str | None) -> tuple[str | None, str | None]:
    """(source, operator) of an origin: ``("pit", "ana")``, ``("button", None)``."""
    if origin is None:
        return None, None
    source, _, operator = origin.partition("/")
    return source, operator or None


_PLAIN: dict[
    str, type[CutCardSeen | OpenRound | Reveal | Exposed | EndShoe | AnnounceBurn]
] = {
    "announce_burn": AnnounceBurn,
    "cut": CutCardSeen,
    "open": OpenRound,
    "reveal": Reveal,
    "exposed": Exposed,
    "end": EndShoe,
}


def parse_input(line: str, ts: float | None = None) -> Input:
    """Parse one line of the replay notation (comments already stripped)."""
    words = line.split()
    if words and words[0].startswith(ORIGIN_PREFIX):
        origin = check_origin(words[0][len(ORIGIN_PREFIX) :])
        rest = line.split(None, 1)[1] if len(words) > 1 else ""
        return replace(parse_input(rest, ts), origin=origin)
    if not words:
        raise InputError("empty line")
    head, args = words[0].lower(), words[1:]
    if head in _PLAIN:
        _no_args(head, args)
        return _PLAIN[head](ts=ts)
    if head == "shoe":
        return NewShoe(decks=_one_int(head, args, optional=True), ts=ts)
    if head == "burn":
        return Burn(count=_one_int(head, args, optional=True) or 1, ts=ts)
    if head == "accept_as_burn":
        return AcceptAsBurn(alarm=_one_int(head, args, optional=True), ts=ts)
    if head in ("void", "void_unconfirmed"):
        return VoidRound(reason=" ".join(args) or "operator", confirm=head == "void", ts=ts)
    if head == "declare":
        return Declare(winner=_winner(args), ts=ts)
    if head == "demo":
        if len(args) != 1 or args[0].lower() not in ("on", "off"):
            raise InputError("demo takes 'on' or 'off'")
        return Demo(on=args[0].lower() == "on", ts=ts)
    if head == "device":
        return _device_report(args, ts)
    if head == "advantage":
        return _advantage(args, ts)
    if head == "shuffle_suspect":
        return _shuffle_suspect(args, ts)
    if head == "journal_lost":
        return _journal_lost(args, ts)
    if head == "unreadable":
        _no_args(head, args)
        return DrawCard(card=None, ts=ts)
    if args:
        raise InputError(f"unknown input {head!r}")
    try:
        return DrawCard(card=parse_card(words[0]), ts=ts)
    except CardError as exc:
        raise InputError(f"not an input: {words[0]!r} is no command, and {exc.reason}") from None


def _no_args(head: str, args: list[str]) -> None:
    if args:
        raise InputError(f"{head} takes no argument, got {' '.join(args)!r}")


def _one_int(head: str, args: list[str], *, optional: bool) -> int | None:
    if not args and optional:
        return None
    if len(args) != 1 or not args[0].isdigit():
        raise InputError(f"{head} takes one whole number, got {' '.join(args)!r}")
    return int(args[0])


def _winner(args: list[str]) -> Winner:
    names: tuple[Winner, ...] = get_args(Winner)
    for name in names:
        if len(args) == 1 and args[0].lower() == name:
            return name
    raise InputError(f"declare takes one of {' '.join(names)}")


def _device_report(args: list[str], ts: float | None) -> DeviceReport:
    kinds: tuple[DeviceReportKind, ...] = get_args(DeviceReportKind)
    for kind in kinds:
        if args and args[0] == kind:
            return DeviceReport(kind=kind, text=" ".join(args[1:]), ts=ts)
    raise InputError(f"device takes one of {' '.join(kinds)}, then a text")


_ADVANTAGE_FIELDS = ("edge", "threshold", "shoe", "round", "out")
_ADVANTAGE_FORM = "advantage BET on|off edge=X threshold=X shoe=N round=N out=N"


def _advantage(args: list[str], ts: float | None) -> Advantage:
    bet = next((b for b in BETS if args and b == args[0]), None)
    if len(args) != 2 + len(_ADVANTAGE_FIELDS) or bet is None:
        raise InputError(f"{_ADVANTAGE_FORM} (BET one of {' '.join(BETS)})")
    if args[1] not in ("on", "off"):
        raise InputError(f"advantage takes 'on' or 'off', not {args[1]!r}")
    values: list[str] = []
    for name, word in zip(_ADVANTAGE_FIELDS, args[2:], strict=True):
        key, sep, value = word.partition("=")
        if key != name or not sep:
            raise InputError(f"{_ADVANTAGE_FORM}: {name}= expected, got {word!r}")
        values.append(value)
    edge, threshold = _figure("edge", values[0]), _figure("threshold", values[1])
    shoe, rnd, out = (_count(n, v) for n, v in zip(_ADVANTAGE_FIELDS[2:], values[2:], strict=True))
    return Advantage(
        bet=bet, on=args[1] == "on", player_edge=edge, threshold=threshold, shoe=shoe, round=rnd,
        cards_out=out, ts=ts,
    )


def _figure(name: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"advantage {name}: a number, not {text!r}") from None
    if not math.isfinite(value):
        raise InputError(f"advantage {name}: a finite number, not {text!r}")
    return value


def _count(name: str, text: str) -> int:
    if not text.isdigit() or not text.isascii():
        raise InputError(f"advantage {name}: a whole number, not {text!r}")
    return int(text)


def _shuffle_suspect(args: list[str], ts: float | None) -> ShuffleSuspect:
    """``table=T1 shoe=3 earlier=120-129 now=40-49 cards=10 gap=none``, in that order."""
    names = ["table", "shoe", "earlier", "now", "cards", "gap"]
    pairs = [arg.partition("=") for arg in args]
    if [name for name, _, _ in pairs] != names:
        raise InputError("shuffle_suspect takes " + " ".join(f"{n}=..." for n in names))
    table, shoe, earlier, now, cards, gap = (value for _, _, value in pairs)
    spans = [_SPAN.fullmatch(earlier), _SPAN.fullmatch(now)]
    if not _TABLE.fullmatch(table) or not (shoe.isdigit() and cards.isdigit()):
        raise InputError(f"shuffle_suspect: bad table {table!r}, shoe {shoe!r} or cards {cards!r}")
    if spans[0] is None or spans[1] is None or not SHUFFLE_GAP.fullmatch(gap):
        raise InputError(
            f"shuffle_suspect: spans are FIRST-LAST and gap none, extra:N, missing:N or"
            " different:N,"
            f" not {earlier!r}, {now!r}, {gap!r}"
        )
    return ShuffleSuspect(
        table=table, shoe=int(shoe),
        earlier_first=int(spans[0][1]), earlier_last=int(spans[0][2]),
        first=int(spans[1][1]), last=int(spans[1][2]),
        cards=int(cards), gap=gap, ts=ts,
    )


def _journal_lost(args: list[str], ts: float | None) -> JournalLost:
    """``first=101 last=103 evidence=seq-mark,broker``, in that order."""
    pairs = [arg.partition("=") for arg in args]
    form = "journal_lost takes first=N last=N evidence=WORD[,WORD...]"
    if [name for name, _, _ in pairs] != ["first", "last", "evidence"]:
        raise InputError(form)
    first, last, evidence = (value for _, _, value in pairs)
    if not (first.isdigit() and first.isascii() and last.isdigit() and last.isascii()):
        raise InputError(f"{form}: bad first {first!r} or last {last!r}")
    if not 1 <= int(first) <= int(last):
        raise InputError(f"journal_lost: first {first} to last {last} is no range of seqs")
    if not _EVIDENCE.fullmatch(evidence):
        raise InputError(f"{form}: bad evidence {evidence[:40]!r}")
    return JournalLost(first=int(first), last=int(last), evidence=evidence, ts=ts)
