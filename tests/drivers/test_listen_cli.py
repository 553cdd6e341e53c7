"""``baccarat listen`` as an engineer runs it: a process reading a virtual shoe on a pty.

The shoe is the real virtual shoe (a pty behind a symlink); ``listen`` is the real command
in a process of its own. When the shoe speaks the other protocol than the one asked for,
``listen`` says which one to try; every event prints in words, never as a Python repr.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path

from baccarat.drivers.events import CardDrawn, CutCard, ShoeRemoved
from baccarat.sim_hardware.dealer import Dealer
from baccarat.sim_hardware.virtual_shoe import VirtualShoe

WITHIN = 30.0  # seconds for a line to show up on a loaded machine


async def listen_until(link: Path, protocol: str, shoe: VirtualShoe, wanted: str) -> str:
    """Run ``baccarat listen`` on ``link``, send cards until ``wanted`` shows; its output."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "baccarat.cli", "listen", "--device", str(link),
        "--protocol", protocol, "--baud", "115200", "--counters-every", "0",
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdout is not None
    lines: list[str] = []
    try:
        async with asyncio.timeout(WITHIN):
            await _read_until(process.stdout, lines, "listening to")
            await asyncio.sleep(0.5)  # the port opens after the banner
            for card in Dealer(decks=1, seed=4).cards[:6]:
                shoe.send(CardDrawn(card))
            shoe.send(CutCard())
            shoe.send(ShoeRemoved())
            await _read_until(process.stdout, lines, wanted)
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        await process.wait()
    return "".join(lines)


async def _read_until(stream: asyncio.StreamReader, lines: list[str], wanted: str) -> None:
    while not any(wanted in line for line in lines):
        line = (await stream.readline()).decode()
        assert line, "listen ended before printing " + repr(wanted) + ":\n" + "".join(lines)
        lines.append(line)


async def test_line_on_a_framed_shoe_hints_at_framed(tmp_path: Path) -> None:
    link = tmp_path / "shoe"
    async with VirtualShoe(link, "framed", baud=115200) as shoe:
        out = await listen_until(link, "line", shoe, "hint:")
    assert "REJECTED [7e" in out
    assert "try --protocol framed" in out


async def test_framed_on_a_line_shoe_hints_at_line(tmp_path: Path) -> None:
    link = tmp_path / "shoe"
    async with VirtualShoe(link, "line", baud=115200) as shoe:
        out = await listen_until(link, "framed", shoe, "hint:")
    assert "no frame start flag" in out
    assert "try --protocol line" in out


async def test_the_hint_is_given_once_and_never_on_the_right_protocol(tmp_path: Path) -> None:
    link = tmp_path / "shoe"
    async with VirtualShoe(link, "framed", baud=115200) as shoe:
        out = await listen_until(link, "framed", shoe, "shoe removed")
    assert "hint:" not in out
    assert "REJECTED" not in out


async def test_events_print_in_words_not_as_python_reprs(tmp_path: Path) -> None:
    link = tmp_path / "shoe"
    async with VirtualShoe(link, "framed", baud=115200) as shoe:
        out = await listen_until(link, "framed", shoe, "shoe removed")
    assert " cut card\n" in out
    assert "CutCard" not in out
    assert "ShoeRemoved" not in out
    assert "seq=" not in out
