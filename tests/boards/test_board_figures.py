"""The terminal board's figures agree with each other, and with the controller, at every moment.

The header's cards left and the statistics' cards left are drawn after every message of a
realistic shoe (burns ordered by the pit, a demo round, an unreadable card burned, a void
round, the shoe's end and a new shoe) and must be the same figure: the controller's newest.
"""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console, RenderableType

from baccarat.boards.state import BoardState, fold
from baccarat.boards.terminal import header, render, results_panel
from baccarat.messages.bodies import Message, ShoeMessage
from baccarat.messages.roads import RoadsMessage
from boards.realistic_shoe import realistic_messages

pytestmark = pytest.mark.xdist_group("board_figures")  # module fixtures: one worker

WHOLE_BOARD_EVERY = 100
"""Besides the header and statistics after every message, the whole board this often."""
HEADER_CARDS = re.compile(r"Shoe \d+  (\d+) cards")
STATS_CARDS = re.compile(r"left (\d+)|Cards (\d+)")


def text_of(renderable: RenderableType, width: int, height: int) -> str:
    console = Console(width=width, height=height, color_system=None, file=io.StringIO())
    with console.capture() as capture:
        console.print(renderable)
    return capture.get()


def figures(text: str) -> tuple[list[str], list[str]]:
    """The cards-left figures of the header and of the statistics in a drawn board."""
    in_header = HEADER_CARDS.findall(text)
    in_stats = [a or b for a, b in STATS_CARDS.findall(text)]
    return in_header, in_stats


@pytest.fixture(scope="module")
def messages() -> list[Message]:
    return realistic_messages()


@pytest.mark.slow
def test_header_and_statistics_show_the_same_cards_left_after_every_message(
    messages: list[Message],
) -> None:
    state = BoardState(table="T1")
    disagreements = []
    expected = ""  # what the controller said last about the cards left in its shoe
    for index, message in enumerate(messages):
        state = fold(state, message)
        if isinstance(message, ShoeMessage):
            expected = str(message.cards_left)
        elif isinstance(message, RoadsMessage):
            expected = str(message.stats.cards_left)
        # the header and the statistics as at 80x24, and as on a tall board (full labels)
        drawn = [
            figures(text_of(header(state), 80, 1) + text_of(results_panel(state, 36, 7), 40, 9))
        ]
        if isinstance(message, ShoeMessage | RoadsMessage):
            drawn += [figures(text_of(results_panel(state, 56, 9), 60, 11))]
        if index % WHOLE_BOARD_EVERY == 0:
            drawn += [figures(text_of(render(state, 80, 24), 80, 24))]
            drawn += [figures(text_of(render(state, 120, 40), 120, 40))]
        shown = {figure for in_header, in_stats in drawn for figure in in_header + in_stats}
        if shown and shown != {expected}:
            disagreements.append(f"after {message.seq} ({message.type}): {shown}, not {expected}")
    assert disagreements == []
    assert state.shoe is not None
    assert state.shoe.shoe == 2  # the sequence went into the second shoe


def test_the_sequence_has_the_moments_where_the_counts_change(messages: list[Message]) -> None:
    """Burns outside a result, a void round and a demo round: the figures' hard cases."""
    kinds = {m.type for m in messages}
    assert {"void", "alarm", "alarm_cleared"} <= kinds
    shoes = [m for m in messages if isinstance(m, ShoeMessage)]
    assert any(m.demo for m in shoes)
    assert [m.shoe for m in shoes][-1] == 2
    roads_seqs = {m.seq - 1 for m in messages if isinstance(m, RoadsMessage)}
    lone_shoe_messages = [m for m in shoes if m.seq not in roads_seqs]
    assert len(lone_shoe_messages) > 5  # shoe messages with no roads message right after
