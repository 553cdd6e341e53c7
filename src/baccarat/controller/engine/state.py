"""The engine's state: the shoe in play, its current round, and the alarms they hold."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

from baccarat.cards import Card
from baccarat.messages.bodies import (
    AlarmMessage,
    Correction,
    DealtCard,
    HandResult,
    RecalledRound,
    RoundMessage,
    SettledAlarm,
    ShoePhase,
)
from baccarat.rules import tableau
from baccarat.rules.alarm_kinds import AlarmKind
from baccarat.rules.tableau import Position, Winner

RECALL_ROUNDS: Final = 10
"""Rounds kept for game recall."""
EXTRA_BURNS_AT_MOST: Final = 8
"""Burn presses beyond the procedure's kept at once; a press past them is refused (a notice)."""


@dataclass(slots=True)
class Alarm:
    """An alarm the engine raised: open until settled, or a one-off notice.

    An open alarm waits for a correction (it has ``corrections``), or, a ``link_down``, for
    its link to be up again.

    ``holds_card`` when the alarm holds cards aside, in nobody's hand: ``cards`` are those
    cards, oldest first (``None`` for one the shoe could not read). More than one when
    cards of the same kind came into a table the alarm already blocks: they are coalesced
    into it, and each ``accept_as_burn`` sends its oldest card to the discard. A
    ``foreign`` card is not one of the shoe's own. ``text`` is what the alarm said when it
    was raised; ``message`` is its latest ``alarm`` message, as the open alarms list it.
    """

    id: int
    kind: AlarmKind
    corrections: list[Correction]
    text: str
    cards: list[Card | None] = field(default_factory=list)
    holds_card: bool = False
    foreign: bool = False
    by_deal: bool = True
    """A ``missing_card``: the due card settles it. No longer once the dealer pressed
    ``declare`` after it (``open`` restarts the round): then a person must look."""
    message: AlarmMessage = field(init=False)


@dataclass(frozen=True, slots=True)
class WithheldCard:
    """A card dealt on a squeeze table, shown only when the round is revealed."""

    position: Position
    card: str
    player_total: int
    banker_total: int


@dataclass(slots=True)
class Round:
    """One round of a shoe: its hands, what is due next, and what holds it open.

    A round is *complete* when the tableau says no card is due, and *closed* when it is
    void, or complete, shown and free of alarms: only then may the next round begin.
    """

    number: int
    demo: bool
    round_id: str
    burn_due: int = 0
    player: list[Card] = field(default_factory=list)
    banker: list[Card] = field(default_factory=list)
    player_total: int = 0
    banker_total: int = 0
    due: Position | None = "P1"
    dealt: list[DealtCard] = field(default_factory=list)
    """Every card of the round in dealing order, burn cards included (game recall)."""
    exposed: list[Position] = field(default_factory=list)
    last_position: Position | None = None
    withheld: list[WithheldCard] = field(default_factory=list)
    shown: list[DealtCard] = field(default_factory=list)
    """The cards published on the card topic so far, burns included (the round message)."""
    shown_totals: tuple[int | None, int | None] = (None, None)
    """Player's and Banker's totals as the last card shown gave them."""
    alarms: list[Alarm] = field(default_factory=list)
    winner: Winner | None = None
    revealed: bool = False
    published: bool = False
    void: bool = False
    voided_by: str | None = None
    settled: list[SettledAlarm] = field(default_factory=list)
    """The round's alarms as they were settled (for the recall)."""
    declared: Winner | None = None
    """The dealer's ``declare`` kept until the cards give the result, then judged."""
    dealt_since_open: int = 0
    """Cards the round took since an ``open`` pressed in it restarted it."""

    def restart(self, burn_due: int) -> None:
        """``open`` pressed in the round: it starts again from its burn and first card.

        Its hands' cards leave it (the caller holds them aside, and the recall shows them
        when they are burned); its burn cards stay in the discard and in ``dealt``.
        """
        self.dealt = [d for d in self.dealt if d.position == "burn"]
        self.player, self.banker = [], []
        self.player_total = self.banker_total = 0
        self.due = "P1"
        self.burn_due = burn_due
        self.exposed, self.withheld, self.shown = [], [], []
        self.last_position = None
        self.shown_totals = (None, None)
        self.revealed = False
        self.declared = None
        self.dealt_since_open = 0

    @property
    def complete(self) -> bool:
        """No card is due by the tableau any more."""
        return self.winner is not None

    @property
    def closed(self) -> bool:
        """Void, or complete, shown and settled: the next round may begin."""
        return self.void or (self.published and not self.alarms)

    @property
    def next_card(self) -> Position | Literal["burn"] | None:
        """What the next card of this round is: its burn card, a position, or none."""
        return "burn" if self.burn_due else self.due

    def next_position(self) -> Position | None:
        """Where the next card goes by the tableau; ``None`` when complete."""
        return self.due

    def record_burn(self, code: str | None) -> None:
        """Note a card of this round that went to the discard (for game recall)."""
        self.dealt.append(DealtCard(position="burn", card=code))

    def deal(self, card: Card) -> Position:
        """Put a card where the tableau wants the next one (Art. 7, 9); return where."""
        position = self.due
        if position is None:
            raise ValueError(f"round {self.number} is complete: no card is due")
        if position[0] == "P":
            self.player.append(card)
            self.player_total = (self.player_total + card.value) % 10
        else:
            self.banker.append(card)
            self.banker_total = (self.banker_total + card.value) % 10
        self.dealt.append(DealtCard(position=position, card=card.code))
        self.last_position = position
        player, banker = self.player, self.banker
        self.due = tableau.position_due(
            len(player),
            len(banker),
            self.player_total,
            self.banker_total,
            player[2].value if len(player) == 3 else None,
        )
        if self.due is None:
            self.winner = tableau.winner(self.player_total, self.banker_total)
        return position

    def message(self, shoe: int, seq: int, ts: float | None) -> RoundMessage:
        """The round's state as it stands, as the ``round`` topic carries it.

        Nothing is due on a squeeze table before its reveal, nor in a closed round.
        """
        status: Literal["open", "complete", "void"] = (
            "void" if self.void else "complete" if self.published else "open"
        )
        hidden = bool(self.withheld) or self.closed
        return RoundMessage(
            seq=seq,
            ts=ts,
            shoe=shoe,
            round=self.number,
            round_id=self.round_id,
            status=status,
            demo=self.demo,
            next=None if hidden else self.next_card,
            cards=list(self.shown),
            player_total=self.shown_totals[0],
            banker_total=self.shown_totals[1],
        )

    def recalled(self, shoe: int) -> RecalledRound:
        """The finished round as game recall shows it."""
        return RecalledRound(
            shoe=shoe,
            round=self.number,
            round_id=self.round_id,
            status="void" if self.void else "result",
            winner=None if self.void else self.winner,
            player_total=self.player_total,
            banker_total=self.banker_total,
            demo=self.demo,
            cards=list(self.dealt),
            exposed=list(self.exposed),
            settled=list(self.settled),
            voided_by=self.voided_by,
        )

    def hands(self) -> tuple[HandResult, HandResult]:
        """Player's and Banker's hands as the result shows them."""
        return self.player_hand(), self.banker_hand()

    def player_hand(self) -> HandResult:
        """Player's hand as the result shows it."""
        return _hand(self.player, self.player_total)

    def banker_hand(self) -> HandResult:
        """Banker's hand as the result shows it."""
        return _hand(self.banker, self.banker_total)


def _hand(cards: list[Card], total: int) -> HandResult:
    first_two = cards[:2]
    return HandResult(
        cards=[c.code for c in cards],
        total=total,
        natural=len(first_two) == 2 and tableau.is_natural(sum(c.value for c in first_two) % 10),
        pair=len(first_two) == 2 and first_two[0].rank == first_two[1].rank,  # Art. 13
    )


@dataclass(slots=True)
class Shoe:
    """One shoe: its inventory, burn, cut card, demo rounds and last round.

    ``burn_due`` is ``None`` while the face-up first card that sets the burn is awaited.
    """

    number: int
    decks: int
    counts: list[int] = field(default_factory=lambda: [0] * 52)
    """Cards of each kind (by :attr:`Card.index`) out of the shoe."""
    phase: ShoePhase = "burning"
    burn_due: int | None = 0
    drawn: int = 0
    burned: int = 0
    cut_card: bool = False
    last_round_no: int | None = None
    tie_extension: bool = False
    demo_on: bool = False
    demo_rounds: int = 0
    results: int = 0
    round_no: int = 0
    alarms: list[Alarm] = field(default_factory=list)
    """Alarms that belong to no round: cards held during the shoe's burn or before open."""
    taken: list[Card] = field(default_factory=list)
    """Cards of the current round, for a continuous shuffler that takes them back."""
    ended: bool = False
    burn_pressed: bool = False
    """The dealer's burn button was pressed and no round burn card has come since."""
    extra_burns: list[str] = field(default_factory=list)
    """Burn presses when no burn was due (a second burn, a burn between hands or mid-round),
    oldest first, each by where it was pressed: each says the next card is a burn card,
    burned with an ``extra_burn`` alarm."""

    @property
    def total(self) -> int:
        """Cards in the shoe when full."""
        return self.decks * 52

    @property
    def cards_left(self) -> int:
        """Cards still in the shoe."""
        return self.total - self.drawn

    def is_foreign(self, card: Card) -> bool:
        """One more of this card than the shoe's decks hold (Art. 1)."""
        return self.counts[card.index] >= self.decks

    def take(self, card: Card | None, *, keep: bool) -> None:
        """Count a card of the shoe's own out of it; ``keep`` it to give back later."""
        self.drawn += 1
        if card is not None:
            self.counts[card.index] += 1
            if keep:
                self.taken.append(card)

    def give_back(self) -> None:
        """Art. 7.2: the automatic shuffler-dealer takes the round's cards back."""
        for card in self.taken:
            self.counts[card.index] -= 1
        self.drawn = 0
        self.burned = 0
        self.taken.clear()
