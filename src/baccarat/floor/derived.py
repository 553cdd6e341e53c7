"""Derived views made again from a table's stored facts, byte for byte.

A derived view is a body the engine computes from what it published before: ``roads`` is
the scoreboard of the shoe's results, ``round`` the live round (its cards so far, what is
due next), ``recall`` the shoe's last rounds with every card. The recorder keeps the facts
whole; of a derived view it keeps its ``seq``, topic and ``ts`` (its *place*), and the
table's latest one whole (:mod:`baccarat.floor.store`). :class:`TableViews` folds a table's
messages in ``seq`` order, as the engine did, and at each derived view's ``seq`` makes the
body the table published there, with the engine's own code: the roads through
:class:`baccarat.controller.engine.roads.Roads`, a round and its recall entry through the
engine's :class:`baccarat.controller.engine.state.Round` (``deal``, ``record_burn``,
``restart``, ``message``, ``recalled``), serialized by the message models.

What the facts give, by view:

- ``roads``: each result that is not a demo round's, in order; a void takes its round off;
  a shoe message with a new shoe number clears them, and so does a new page of a
  continuous shuffler (the built-in profile's ``roads_page``, by the name the shoe message
  carries); the shoe number and ``cards_left`` of the last shoe message.
- ``round`` and ``recall``: a ``round`` body when the last round is closed (void, or its
  result out and no alarm waiting on it) opens the next one (its number one up, its burn
  the built-in profile's ``burn_per_round``, demo as the last shoe message says); each
  card of the round is dealt (a hand card) or burned (a burn card, counted off the round's
  burn while one is due); an ``open_in_round`` alarm restarts the round; ``burn_skipped``
  ends its burn; an alarm with corrections waits on its round until its ``alarm_cleared``,
  which the recall shows as settled; a result publishes the round (with the positions it
  exposed), a void voids it (with its origin). A ``recall`` body after a result or a void
  adds the round (a void replaces the shown round's entry); otherwise it shows the round
  whose alarm was just settled, as the engine does.

Not every body is a function of the facts: a squeeze table's ``round`` while cards are
withheld, a foreign card accepted as a burn, the positions exposed in a round later made
void. That is why the recorder makes every derived body at its arrival and compares it with
what came (:class:`baccarat.floor.recorder.Recorder`): one it cannot make exactly is stored
whole, as a fact; only one made byte for byte is kept as its place. The history folds the
same messages with the same code, so that what it makes at a place is what the recorder
compared. A fold is only as good as its messages: one that did not begin at the table's
first ``seq`` makes nothing until a shoe starts (a shoe message with a new number), nor
after a ``seq`` is missing, until the next shoe.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, Final

from baccarat.cards import CardError, parse_card
from baccarat.controller.engine.roads import Roads
from baccarat.controller.engine.state import RECALL_ROUNDS, Alarm, Round
from baccarat.floor.records import DerivedSeq, Received
from baccarat.messages.bodies import DealtCard, RecalledRound, RecallMessage, SettledAlarm
from baccarat.rules.profiles import PROFILES, Profile, ProfileError, load_profile

VIEWS: Final = frozenset({"roads", "round", "recall"})
"""Every derived topic, made again by :class:`TableViews`; :data:`DERIVED_TOPICS` must be
these (``tests/floor/test_derived.py``)."""
HANDS: Final = frozenset({"P1", "P2", "P3", "B1", "B2", "B3"})


def builtin_profile(name: str) -> Profile | None:
    """The built-in profile of that name, or None (a table's own profile is not known here)."""
    if name not in PROFILES:
        return None
    try:
        return load_profile(name)
    except ProfileError:
        return None


class RoadsView:
    """The roads of the shoe in play, as the engine keeps them."""

    def __init__(self) -> None:
        self.roads = Roads()
        self.cards_left = 0
        self.page = 0

    def new_shoe(self, profile: Profile | None) -> None:
        """A shoe starts: the roads are cleared."""
        self.roads.clear()
        self.page = profile.roads_page if profile is not None else 0

    def fact(self, body: Mapping[str, Any]) -> None:
        """A shoe message (its cards left), a result (added), a void (taken off)."""
        kind = body.get("type")
        if kind == "shoe":
            self.cards_left = body["cards_left"]
        elif kind == "result" and not body.get("demo"):
            if self.page and len(self.roads) >= self.page:
                self.roads.clear()  # a new page of roads (continuous shufflers)
            player, banker = body["player"], body["banker"]
            self.roads.add(
                body["round"], body["winner"], player["pair"], banker["pair"],
                player["natural"] or banker["natural"],
            )
        elif kind == "void" and not body.get("demo"):
            self.roads.remove(body["round"])

    def body(self, shoe: int, seq: int, ts: float | None) -> str:
        """The roads body published at ``seq``."""
        return self.roads.message(seq=seq, shoe=shoe, cards_left=self.cards_left, ts=ts).to_json()


class RoundsView:
    """The shoe's rounds as the engine keeps them: the last one, and the recall."""

    def __init__(self) -> None:
        self.round: Round | None = None
        self.recall: deque[RecalledRound] = deque(maxlen=RECALL_ROUNDS)
        self.burn: int | None = None
        """The built-in profile's burn per round; None: not known, no round can be made."""
        self.demo = False
        self.closing = False
        """A result or a void came: the next recall adds the round."""
        self.changed = False
        """The round changed since its last body (a card, a restart, its result or void): the
        next ``round`` body is its own, even if it is closed now."""
        self.lost = False
        """A card of the round could not be placed as the fact says: its bodies are not made."""

    def new_shoe(self, profile: Profile | None) -> None:
        """A shoe starts: no round, an empty recall."""
        self.round, self.closing, self.changed, self.lost = None, False, False, False
        self.recall.clear()
        self.burn = profile.burn_per_round if profile is not None else None

    def fact(self, body: Mapping[str, Any]) -> None:
        """Fold in a fact of the shoe in play."""
        kind = body.get("type")
        if kind == "shoe":
            self.demo = bool(body.get("demo"))
            return
        rnd = self.round
        if rnd is None or body.get("round") != rnd.number:
            return  # a shoe burn, a device alarm outside the round, a round not folded
        if kind == "card":
            self._card(rnd, body)
            self.changed = True
        elif kind == "alarm":
            self._alarm(rnd, body)
        elif kind == "alarm_cleared":
            rnd.alarms = [a for a in rnd.alarms if a.id != body["id"]]
            rnd.settled.append(SettledAlarm(id=body["id"], kind=body["kind"], by=body["by"],
                                            origin=body.get("origin")))
        elif kind == "result":
            rnd.published = True
            rnd.exposed = list(body.get("exposed", []))
            self.closing = self.changed = True
        elif kind == "void":
            rnd.void, rnd.voided_by = True, body.get("origin")
            self.closing = self.changed = True

    def _card(self, rnd: Round, body: Mapping[str, Any]) -> None:
        position, code = body["position"], body.get("card")
        shown = DealtCard(position=position, card=code)
        if position == "burn":
            if rnd.burn_due:
                rnd.burn_due -= 1
            rnd.record_burn(code)
        elif position in HANDS and code is not None and rnd.due == position:
            try:
                rnd.deal(parse_card(code))
            except CardError:
                self.lost = True
            rnd.shown_totals = (body.get("player_total"), body.get("banker_total"))
        else:
            self.lost = True
        rnd.shown.append(shown)

    def _alarm(self, rnd: Round, body: Mapping[str, Any]) -> None:
        kind = body["kind"]
        if kind == "open_in_round":
            rnd.restart(self.burn or 0)
            self.changed = True
        elif kind == "burn_skipped":
            rnd.burn_due = 0
        if body.get("correctable"):
            rnd.alarms.append(Alarm(body["id"], kind, list(body.get("corrections", [])),
                                    str(body.get("text", ""))))

    def round_body(self, shoe: int, seq: int, ts: float | None) -> str | None:
        """The round body at ``seq``: the last round's, or a new one's.

        A new round's if the last is closed and its closing was shown.
        """
        rnd = self.round
        if rnd is None or (rnd.closed and not self.changed):
            number = rnd.number + 1 if rnd is not None else 1
            rnd = self.round = Round(number, self.demo, f"{shoe}-{number}", self.burn or 0)
            self.closing, self.lost = False, False
        self.changed = False
        if self.burn is None or self.lost:
            return None
        return rnd.message(shoe, seq, ts).to_json()

    def recall_body(self, shoe: int, seq: int, ts: float | None) -> str | None:
        """The recall at ``seq``: the round just finished added, or the one just settled."""
        rnd = self.round
        if rnd is None:
            return None
        entry = rnd.recalled(shoe)
        if self.closing:
            self.closing = False
            if rnd.void and self.recall and self.recall[-1].round_id == rnd.round_id:
                self.recall.pop()  # a shown round voided afterwards: its entry replaced
            self.recall.append(entry)
        else:
            at = [i for i, e in enumerate(self.recall) if e.round_id == rnd.round_id]
            if not at:
                return None
            self.recall[at[0]] = entry
        if self.burn is None or self.lost:
            return None
        return RecallMessage(seq=seq, ts=ts, rounds=list(self.recall)).to_json()


class TableViews:
    """One table's derived views, folded from its messages in ``seq`` order.

    ``from_start``: the first message offered is the table's first (``seq`` 1), so the
    views are known from it; otherwise only from the next shoe. Every message is offered:
    a fact to :meth:`fact`, a derived view to :meth:`make` (whether or not it is kept whole).
    """

    def __init__(self, *, from_start: bool) -> None:
        self.known = from_start
        self.shoe: int | None = 0 if from_start else None
        self.last_seq: int | None = 0 if from_start else None
        self.roads = RoadsView()
        self.rounds = RoundsView()
        self.unusable = 0
        """Bodies the fold could not use (the views unknown after each, until a new shoe)."""

    def _step(self, seq: int) -> None:
        if self.last_seq is not None and seq != self.last_seq + 1:
            self.known = False  # a message missing: nothing is made until the next shoe
        self.last_seq = seq

    def fact(self, body: Mapping[str, Any]) -> None:
        """Fold in the table's next fact (a body that is not a derived view).

        A body the fold cannot use (a field missing or of another type: the screen checks
        only the fields the store reads) leaves the views unknown until the next shoe.
        """
        self._step(body["seq"])
        try:
            self._fold(body)
        except Exception:  # hostile input: never out of the recorder's loop
            self.unusable += 1
            self.known = False

    def _fold(self, body: Mapping[str, Any]) -> None:
        if body.get("type") == "shoe" and body["shoe"] != self.shoe:
            if self.shoe is not None:
                self.known = True  # a shoe starts: nothing before it is needed
            self.shoe = body["shoe"]
            profile = builtin_profile(str(body.get("profile")))
            self.roads.new_shoe(profile)
            self.rounds.new_shoe(profile)
        self.roads.fact(body)
        self.rounds.fact(body)

    def make(self, topic: str, seq: int, ts: float | None) -> str | None:
        """The ``topic`` body the table published at ``seq``, or None if it cannot be made."""
        self._step(seq)
        try:
            made = self._make(topic, seq, ts)
        except Exception:  # a state no engine reaches, from hostile facts
            self.unusable += 1
            self.known = False
            return None
        return made if self.known else None

    def _make(self, topic: str, seq: int, ts: float | None) -> str | None:
        shoe = self.shoe or 0
        if topic == "roads":
            made: str | None = self.roads.body(shoe, seq, ts)
        elif topic == "round":
            made = self.rounds.round_body(shoe, seq, ts)
        elif topic == "recall":
            made = self.rounds.recall_body(shoe, seq, ts)
        else:
            raise ValueError(f"not a derived view: {topic!r}")
        return made


class Arrivals:
    """The recorder's side: each table's views folded as its messages come, and compared.

    :meth:`mark` sets ``place`` on every derived view that the facts before it make again
    byte for byte; the others are kept whole. A repeat (a ``seq`` not above the table's
    last) is not folded again.
    """

    def __init__(self) -> None:
        self.tables: dict[str, TableViews] = {}
        self.places = 0
        """Derived views kept as their place."""
        self.wholes = 0
        """Derived views kept whole: the facts before them did not make them exactly."""
        self._unsure: dict[str, int] = {}

    def mark(self, messages: Sequence[Received]) -> list[Received]:
        """The messages, in order, each derived view marked ``place`` if it was made."""
        marked = []
        for message in messages:
            seq = message.seq
            views = self.tables.get(message.table)
            if seq is not None and views is None:
                views = self.tables[message.table] = TableViews(from_start=seq == 1)
            if seq is None or views is None or (
                views.last_seq is not None and seq <= views.last_seq
            ):
                marked.append(message)
                continue
            kind = message.body.get("type")
            if kind not in VIEWS:
                views.fact(message.body)
                marked.append(message)
            elif views.make(str(kind), seq, message.body.get("ts")) == message.payload:
                marked.append(replace(message, place=True))
                self.places += 1
            else:
                marked.append(message)
                self.wholes += 1
        return marked

    def lost(self, message: Received) -> None:
        """A message folded in and then not stored (the database refused it).

        The table's views are not known again until its next shoe, as the history's fold
        will find that ``seq`` missing; a view after it not yet stored is kept whole
        (:meth:`recheck`).
        """
        views = self.tables.get(message.table)
        if views is not None and message.seq is not None:
            views.known = False
            self._unsure[message.table] = min(
                message.seq, self._unsure.get(message.table, message.seq)
            )

    def recheck(self, message: Received) -> Received:
        """The message, kept whole if it is a place after a message of its table was lost."""
        lost = self._unsure.get(message.table)
        if message.place and lost is not None and (message.seq or 0) > lost:
            return replace(message, place=False)
        return message


def rebuilt(
    stored: Iterable[tuple[Mapping[str, Any], str]], places: Iterable[DerivedSeq], topic: str
) -> Iterator[tuple[int, str | None]]:
    """(seq, body) of every ``topic`` view of one table, by ``seq``; None: not made.

    ``stored`` is the table's stored messages (body and text, by ``seq``), derived views
    kept whole among them; ``places`` the derived views kept as their place. A view kept
    whole is given as it was stored.
    """
    pending = iter(places)
    place = next(pending, None)
    views: TableViews | None = None
    for body, text in _merged(stored, pending, place):
        seq = body["seq"]
        if views is None:
            views = TableViews(from_start=seq == 1)
        kind = body.get("type")
        if kind in VIEWS:
            made = views.make(str(kind), seq, body.get("ts"))
            if kind == topic:
                yield seq, text if text is not None else made
        else:
            views.fact(body)


def _merged(
    stored: Iterable[tuple[Mapping[str, Any], str]], pending: Iterator[DerivedSeq],
    place: DerivedSeq | None,
) -> Iterator[tuple[Mapping[str, Any], str | None]]:
    """The stored messages and the places in one ``seq`` order (a place has no text)."""
    for body, text in stored:
        while place is not None and place.seq < body["seq"]:
            yield {"seq": place.seq, "type": place.topic, "ts": place.ts}, None
            place = next(pending, None)
        yield body, text
    while place is not None:
        yield {"seq": place.seq, "type": place.topic, "ts": place.ts}, None
        place = next(pending, None)


def rebuild_at(
    stored: Iterable[tuple[Mapping[str, Any], str]], places: Iterable[DerivedSeq], topic: str,
    at_seq: int,
) -> tuple[int, str | None] | None:
    """The ``topic`` view current at ``at_seq`` (the newest at or before it), or None."""
    found = None
    for seq, body in rebuilt(stored, places, topic):
        if seq > at_seq:
            break
        found = (seq, body)
    return found
