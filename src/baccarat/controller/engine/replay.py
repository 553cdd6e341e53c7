"""Replay: a file of inputs, one per line, through the engine.

The notation is the one of :func:`baccarat.controller.engine.inputs.parse_input`: a card in any
notation, or ``shoe``, ``cut``, ``open``, ``reveal``, ``void`` (confirmed: it may take a
published result off the roads), ``void_unconfirmed``, ``burn``, ``accept_as_burn``,
``exposed``, ``declare banker|player|tie``, ``demo on|off``, ``end``; ``#`` starts a
comment. A line may begin with ``@<unix seconds>``, the time the input arrived, which the
messages then carry as ``ts`` (the journal's lines have it, so their replay is exact).
Replay is the audit tool for a recorded shoe: it prints exactly the bodies the daemon
publishes for the same inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from baccarat.controller.engine.engine import Engine
from baccarat.controller.engine.inputs import Input, InputError, parse_input
from baccarat.messages.bodies import Message
from baccarat.rules.profiles import Profile

ErrorSink = Callable[[int, str], None]


def parse_lines(lines: Iterable[str], on_error: ErrorSink) -> Iterator[tuple[int, Input]]:
    """Inputs with their line numbers; a bad line goes to ``on_error`` and is skipped."""
    for number, raw in enumerate(lines, start=1):
        text = raw.split("#", 1)[0].strip()
        if not text:
            continue
        try:
            ts, text = _timestamp(text)
            yield number, parse_input(text, ts)
        except InputError as exc:
            on_error(number, str(exc))


def _timestamp(text: str) -> tuple[float | None, str]:
    if not text.startswith("@"):
        return None, text
    stamp, _, rest = text.partition(" ")
    try:
        return float(stamp[1:]), rest.strip()
    except ValueError:
        raise InputError(f"bad time {stamp!r}: expected @<unix seconds>") from None


def replay_lines(
    lines: Iterable[str], profile: Profile, *, on_error: ErrorSink, roads: bool = True
) -> Iterator[Message]:
    """Every message the engine produces for these lines, in order.

    A line that is not an input, or an input the engine refuses in its state, is reported
    to ``on_error`` with its line number, and the replay goes on.
    """
    engine = Engine(profile, roads=roads)
    for number, inp in parse_lines(lines, on_error):
        outcome = engine.feed(inp)
        if outcome.refused is not None:
            on_error(number, f"refused: {outcome.refused}")
        yield from outcome.messages
