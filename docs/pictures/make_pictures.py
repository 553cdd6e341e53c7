"""Draw the pictures of docs/roads.md: a full shoe's roads and the terminal board, as SVG.

Run from the repository: ``.venv/bin/python docs/pictures/make_pictures.py``. The shoe is
a seeded 8-deck shoe played through the engine, so the pictures are the same every time.
"""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from baccarat.boards.roads_view import roads_report
from baccarat.boards.state import BoardState, fold_all, with_controller_status, with_link
from baccarat.boards.terminal import render
from baccarat.controller.engine.replay import replay_lines
from baccarat.controller.engine.shoe_inputs import shoe_inputs
from baccarat.messages.bodies import Message
from baccarat.messages.roads import RoadsMessage
from baccarat.rules.profiles import load_profile

HERE = Path(__file__).parent
SEED = 7


def shoe_messages() -> list[Message]:
    """Every message of the seeded shoe."""
    lines = [i.to_text() for i in shoe_inputs(8, SEED)]
    return list(replay_lines(lines, load_profile("macau"), on_error=lambda n, t: None))


def recording_console(width: int, height: int | None = None) -> Console:
    """A colour console that draws into memory, for ``save_svg``."""
    return Console(
        record=True,
        width=width,
        height=height,
        force_terminal=True,
        color_system="truecolor",
        file=io.StringIO(),
    )


def main() -> None:
    """Write roads-full-shoe.svg and board-80x24.svg next to this script."""
    messages = shoe_messages()
    roads = [m for m in messages if isinstance(m, RoadsMessage)][-1]
    console = recording_console(130)
    console.print(roads_report(roads))
    console.save_svg(str(HERE / "roads-full-shoe.svg"), title="baccarat roads")

    middle = [i for i, m in enumerate(messages) if getattr(m, "position", "") == "B2"][40]
    state = fold_all(BoardState(table="T7"), messages[: middle + 1])
    state = with_controller_status(with_link(state, "connected"), b"online")
    for width, height in ((80, 24),):
        console = recording_console(width, height)
        console.print(render(state, width, height))
        console.save_svg(str(HERE / f"board-{width}x{height}.svg"), title="baccarat board")


if __name__ == "__main__":
    main()
