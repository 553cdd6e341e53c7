"""``baccarat demo``: play a simulated shoe with no hardware and show it round by round.

A seeded 8-deck shoe goes through the rules engine card by card, at a watchable pace, with
a few misdeals injected along the way (an extra card, a foreign card, an unreadable card)
and corrected the way a pit would correct them. Every round, result and alarm is printed.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator

from rich.console import Console
from rich.text import Text

from baccarat.controller.engine import Engine
from baccarat.controller.inputs import (
    AcceptAsBurn,
    CutCardSeen,
    DrawCard,
    Input,
    NewShoe,
    OpenRound,
    VoidRound,
)
from baccarat.controller.messages import (
    AlarmClearedMessage,
    AlarmMessage,
    CardMessage,
    Message,
    ResultMessage,
    ShoeMessage,
    VoidMessage,
)
from baccarat.controller.profiles import load_profile
from baccarat.sim_hardware.shoe_inputs import DEFAULT_CUT_FROM_END, shuffled_shoe

COLOURS = {"banker": "bold red", "player": "bold blue", "tie": "bold green"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``baccarat demo``."""
    parser.add_argument("--seed", type=int, default=2026, help="shuffle seed")
    parser.add_argument("--pace", type=float, default=0.25, help="seconds between cards")
    parser.add_argument("--fast", action="store_true", help="no pause between cards")
    parser.add_argument("--rounds", type=int, default=0, help="stop after N rounds (0: shoe)")


def demo_inputs(seed: int, engine: Engine) -> Iterator[Input]:
    """A seeded shoe in explicit mode, with three dealer's mistakes and their corrections.

    Reads ``engine`` (which the caller feeds) to know when a round has closed. Every card is
    a card of the shoe: the mistakes are cards drawn at the wrong moment or misread.
    """
    cards = iter(shuffled_shoe(8, seed))
    left = 8 * 52
    done: set[int] = set()
    yield NewShoe()
    while True:
        card = next(cards, None)
        if card is None:
            return
        left -= 1
        if left == DEFAULT_CUT_FROM_END - 1:
            yield CutCardSeen()
        rnd, shoe = engine.round, engine.shoe
        between = shoe is not None and shoe.phase == "ready" and (rnd is None or rnd.closed)
        if between and not shoe.burn_due and rnd is not None and rnd.number not in done:  # type: ignore[union-attr]
            done.add(rnd.number)
            if rnd.number == 4:
                yield DrawCard(card)  # drawn before 'open': an extra card
                yield AcceptAsBurn()
                continue
            if rnd.number == 9:
                yield OpenRound()
                yield DrawCard(None)  # the shoe misreads the first card of the round
                yield AcceptAsBurn()
                yield DrawCard(card)
                continue
            if rnd.number == 15:
                yield OpenRound()
                yield DrawCard(card)
                yield VoidRound("demo: the pit voids this round")
                continue
        if between and not shoe.burn_due:  # type: ignore[union-attr]
            yield OpenRound()
        yield DrawCard(card)


def run(args: argparse.Namespace) -> int:
    """Play the shoe and print it."""
    console = Console()
    engine = Engine(load_profile("macau", open_mode="explicit"), roads=False)
    pace = 0.0 if args.fast else args.pace
    console.print("[bold]Baccarat table controller: simulated 8-deck shoe, Macau rules[/]")
    rounds = 0
    for inp in demo_inputs(args.seed, engine):
        outcome = engine.feed(inp)
        for message in outcome.messages:
            _show(console, message)
            if isinstance(message, ResultMessage | VoidMessage):
                rounds += 1
        if isinstance(inp, DrawCard) and pace:
            time.sleep(pace)
        if engine.shoe and engine.shoe.phase == "closed":
            break
        if args.rounds and rounds >= args.rounds:
            break
    console.print(f"[bold]{rounds} rounds played.[/]")
    return 0


def _show(console: Console, message: Message) -> None:
    if isinstance(message, CardMessage):
        where = "burn" if message.position == "burn" else message.position
        console.print(f"  {where:>4} {message.card or '??'}", end="  ")
    elif isinstance(message, ResultMessage):
        text = Text(f"\n  round {message.round}: {message.winner.upper()} ")
        text.stylize(COLOURS[message.winner])
        text.append(
            f"player {message.player.total} {' '.join(message.player.cards)} | "
            f"banker {message.banker.total} {' '.join(message.banker.cards)}"
        )
        console.print(text)
    elif isinstance(message, AlarmMessage):
        console.print(f"\n  [bold yellow]ALARM {message.kind}[/]: {message.text}")
    elif isinstance(message, AlarmClearedMessage):
        console.print(f"  [yellow]alarm {message.id} settled by {message.by}[/]")
    elif isinstance(message, VoidMessage):
        console.print(f"\n  [bold magenta]round {message.round} VOID[/] ({message.reason})")
    elif isinstance(message, ShoeMessage) and message.phase in ("ready", "closed"):
        console.print(
            f"  [dim]shoe {message.shoe}: {message.phase}, {message.cards_left} cards left, "
            f"{message.rounds} rounds{', last round' if message.last_round else ''}[/]"
        )
