"""What the web board's browser tests share: a replayed shoe, publishing it, reading the page.

The shoe is a seeded 8-deck shoe with an unreadable card mid-shoe, accepted as a burn,
replayed by ``baccarat replay`` (as a user runs it); its bodies are published on the
topics and with the retain flags the daemon uses. ``READ_BOARD`` reads what the page
shows from its data attributes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import aiomqtt
import pytest

from baccarat.controller.engine.shoe_inputs import shoe_inputs
from baccarat.messages.catalog import RETAINED_TOPICS as RETAINED
from boards.chromium_cdp import Page, chromium_path

in_chromium = pytest.mark.skipif(
    chromium_path() is None,
    reason="Debian's chromium is not installed (scripts/setup --system installs it)",
)

SEED: Final = 7
TABLE: Final = "T7"
PREFIX: Final = "baccarat"
UNREADABLE_AT: Final = 200  # input index of the unreadable card, mid-shoe
ROOT: Final = Path(__file__).resolve().parents[2]
ARTIFACTS: Final = ROOT / "artifacts" / "web-board"
WAIT: Final = 30.0  # seconds for the page to catch up with what was published (a loaded CI)

READ_BOARD = """(() => {
  const cells = (id) => [...document.querySelectorAll(`#${id} .cell[data-col]`)].map((c) => ({
    col: +c.dataset.col, row: +c.dataset.row, round: +c.dataset.round,
    colour: c.dataset.colour || c.dataset.winner, ties: +(c.dataset.ties || 0),
    banker_pair: c.dataset.bankerPair === 'true', player_pair: c.dataset.playerPair === 'true',
    natural: c.dataset.natural === 'true', marked: !!c.querySelector('.natural-mark'),
  }));
  const ask = {};
  for (const row of document.querySelectorAll('[data-ask]')) {
    ask[row.dataset.ask] = Object.fromEntries([...row.querySelectorAll('[data-ask-road]')]
      .map((m) => [m.dataset.askRoad, m.dataset.colour === 'none' ? null : m.dataset.colour]));
  }
  const stats = Object.fromEntries([...document.querySelectorAll('[data-stat]')]
    .map((s) => [s.dataset.stat, s.textContent.trim()]));
  const live = document.getElementById('live-round');
  const result = document.getElementById('last-result');
  const banner = document.getElementById('alarm-banner');
  return {
    roads: {
      bead_plate: cells('bead-plate'), big_road: cells('big-road'),
      big_eye_boy: cells('big-eye-boy'), small_road: cells('small-road'),
      cockroach_pig: cells('cockroach-pig'),
    },
    widths: Object.fromEntries([...document.querySelectorAll('[data-road]')]
      .map((r) => [r.dataset.road, +r.dataset.width])),
    ask, stats,
    streak: Object.assign({}, document.querySelector('[data-stat="current_streak"]').dataset),
    live: {
      round: +live.dataset.round, status: live.dataset.status, winner: live.dataset.winner,
      cards: Object.fromEntries([...live.querySelectorAll('.slot')]
        .map((s) => [s.dataset.position, s.dataset.card])),
      totals: [...live.querySelectorAll('[data-total]')].map((t) => t.dataset.value),
    },
    result: {round: +result.dataset.round, winner: result.dataset.winner},
    banner: {hidden: banner.hidden, alarms: +banner.dataset.alarms, kind: banner.dataset.kind},
    notice: banner.dataset.notice,
    overlay: document.getElementById('offline-overlay').dataset.reason,
    header_cards_left: document.querySelector('[data-info="cards_left"]').textContent,
    table: document.getElementById('table-name').textContent,
    controller: document.getElementById('controller-status').dataset.controller,
    link: document.body.dataset.link,
    seq: +document.body.dataset.highestSeq,
    rejected: +document.body.dataset.rejected,
  };
})()"""


@dataclass(frozen=True)
class Shoe:
    """The replayed shoe: every message body in order, and the final roads."""

    messages: list[dict[str, Any]]
    bodies: list[str]
    final_roads: dict[str, Any]


def baccarat(*args: str, refused_ok: bool = False) -> str:
    """The output of the ``baccarat`` command (as a subprocess, like a user runs it).

    ``refused_ok``: exit status 1 is fine if every line it complained about was an input
    the engine refused (as the daemon did too), such as a button pressed after the shoe.
    """
    done = subprocess.run(
        [sys.executable, "-m", "baccarat.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    refused = all(": refused: " in line for line in done.stderr.splitlines())
    if done.returncode != 0 and not (refused_ok and done.returncode == 1 and refused):
        raise AssertionError(f"baccarat {' '.join(args)}: status {done.returncode}\n{done.stderr}")
    return done.stdout


def replayed_shoe(folder: Path) -> Shoe:
    """A seeded 8-deck shoe with an unreadable card mid-shoe (accepted as a burn), replayed."""
    lines = [step.to_text() for step in shoe_inputs(8, SEED)]
    lines[UNREADABLE_AT:UNREADABLE_AT] = ["unreadable", "accept_as_burn"]
    path = folder / "shoe.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    bodies = baccarat("replay", str(path)).splitlines()
    final_roads = json.loads(baccarat("roads", "--json", str(path)))
    return Shoe([json.loads(body) for body in bodies], bodies, final_roads)


def artifacts_folder() -> Path:
    """Where the screenshots go (gitignored)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


def topic_of(message: dict[str, Any]) -> str:
    kind = "alarm" if message["type"] == "alarm_cleared" else message["type"]
    return f"{PREFIX}/{TABLE}/{kind}"


async def publish(client: aiomqtt.Client, shoe: Shoe, start: int, stop: int) -> int:
    """Publish messages ``start`` to ``stop - 1`` in order, as the daemon would."""
    for message, body in zip(shoe.messages[start:stop], shoe.bodies[start:stop], strict=True):
        await publish_body(client, message, body)
    return stop


async def publish_body(client: aiomqtt.Client, message: dict[str, Any], body: str = "") -> None:
    """Publish one message on its topic, retained if the daemon retains that topic."""
    topic = topic_of(message)
    retain = topic.rsplit("/", 1)[1] in RETAINED
    await client.publish(topic, body or json.dumps(message), qos=1, retain=retain)


def index_where(shoe: Shoe, start: int, **fields: Any) -> int:
    """The index of the first message from ``start`` whose fields have these values."""
    return next(
        i
        for i, m in enumerate(shoe.messages)
        if i >= start and all(m.get(k) == v for k, v in fields.items())
    )


def last_roads(shoe: Shoe, stop: int) -> dict[str, Any]:
    return next(m for m in reversed(shoe.messages[:stop]) if m["type"] == "roads")


async def caught_up(page: Page, seq: int) -> dict[str, Any]:
    """The board once it has drawn every message up to ``seq``."""
    await page.wait_for(f"+document.body.dataset.highestSeq >= {seq}", limit=WAIT)
    await page.evaluate("new Promise((done) => requestAnimationFrame(() => done(true)))")
    board: dict[str, Any] = await page.evaluate(READ_BOARD)
    # one cards-left figure on the whole board, whichever message said it last
    assert board["header_cards_left"] == board["stats"]["cards_left"]
    return board
