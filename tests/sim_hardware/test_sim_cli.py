"""``baccarat sim shoe`` and ``baccarat listen``, as an engineer runs them."""

from __future__ import annotations

import asyncio
import contextlib
import io
import signal
import subprocess
import sys
import time
from pathlib import Path

from baccarat.cli import build_parser
from baccarat.cli.listen import describe, listen
from baccarat.cli.sim import deal_shoe
from baccarat.drivers.events import CardDrawn, Rejected
from baccarat.sim_hardware.dealer import Dealer
from baccarat.sim_hardware.virtual_shoe import VirtualShoe


def baccarat(*args: str) -> list[str]:
    return [sys.executable, "-m", "baccarat.cli", *args]


def wait_for(path: Path, within: float) -> None:
    deadline = time.monotonic() + within
    while not path.is_symlink():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


def test_sim_shoe_and_listen_talk_over_a_pty(tmp_path: Path) -> None:
    link = tmp_path / "shoe"
    sim = subprocess.Popen(
        baccarat(
            "sim", "shoe", "--link", str(link), "--protocol", "framed", "--baud", "115200",
            "--pace", "0.01", "--seed", "3", "--misdeal-rate", "0.2",
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        wait_for(link, within=10)
        listened = subprocess.run(
            baccarat(
                "listen", "--device", str(link), "--protocol", "framed", "--baud", "115200",
                "--count", "20",
            ),
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )  # fmt: skip
    finally:
        sim.send_signal(signal.SIGINT)
        out, err = sim.communicate(timeout=10)
    assert listened.returncode == 0, listened.stderr
    lines = listened.stdout.splitlines()
    assert sum(" card " in line for line in lines) == 20
    assert any("LINK UP" in line for line in lines)
    assert "counters:" in lines[-1]
    assert "frames_ok=" in lines[-1]
    assert sim.returncode in (0, 130), err
    assert f"virtual shoe {link} -> /dev/pts/" in out
    assert "round  1 P1" in out
    assert not link.exists()  # the symlink goes with the shoe


def test_sim_is_a_subcommand_with_devices() -> None:
    args = build_parser("sim").parse_args(["sim", "shoe", "--link", "/tmp/x", "--decks", "6"])
    assert args.decks == 6
    assert args.protocol == "line"
    assert args.device_module.__name__ == "baccarat.cli.sim"


async def test_listen_prints_events_and_counters(tmp_path: Path) -> None:
    link = tmp_path / "shoe"
    out = io.StringIO()
    shown = io.StringIO()
    dealer = Dealer(decks=1, seed=1, burn=0, buttons=False)
    async with VirtualShoe(link, "framed", baud=115200) as shoe:
        listening = asyncio.create_task(
            listen(str(link), "framed", baud=115200, counters_every=0.2, out=out)
        )
        await asyncio.wait_for(deal_shoe(shoe, dealer, 1, 0.0, shown), 10)  # all acknowledged
        listening.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await listening
    lines = out.getvalue().splitlines()
    cards = [line.split(" ", 2)[2].strip() for line in lines if " card " in line]
    assert cards == [f"card {c.code} ({c.shoe_code})" for c in dealer.cards[:41]]
    assert "LINK UP" in out.getvalue()
    assert "shoe removed" in out.getvalue()
    assert "counters: " in lines[-1]
    assert "shoe 1 done: 41 cards dealt" in shown.getvalue()  # 1 deck, cut card 14 from the end


def test_describe_names_rejected_bytes_in_hex() -> None:
    text = describe(Rejected(b"\x7e\x01", "CRC mismatch: expected 0x1234, received 0x0000", seq=4))
    assert "#4" in text
    assert "REJECTED [7e 01]: CRC mismatch" in text
    card = describe(CardDrawn(Dealer(decks=1, seed=0).cards[0]))
    assert " card " in card
