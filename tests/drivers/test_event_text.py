"""Every device event reads as words for a person (``str``), never as a Python repr."""

from __future__ import annotations

import pytest

from baccarat.cards import parse_card
from baccarat.drivers import events as ev

TEXTS = [
    (ev.CardDrawn(parse_card("QH"), seq=7), "card QH (H12)"),
    (ev.UnreadableCard(b"\x01\xff"), "unreadable card [01 ff]"),
    (ev.CutCard(), "cut card"),
    (ev.ShoeInserted(), "shoe inserted"),
    (ev.ShoeRemoved(seq=3), "shoe removed"),
    (ev.ShuffleStarted(), "shuffle started"),
    (ev.ShuffleDone(), "shuffle done"),
    (ev.DealerButton("declare_tie"), "button declare_tie"),
    (ev.DeviceFault(0x12, "card jam"), "device fault 0x0012: card jam"),
    (ev.Heartbeat(), "heartbeat"),
    (ev.LinkUp("/dev/ttyUSB0 open at 9600 baud"), "link up: /dev/ttyUSB0 open at 9600 baud"),
    (ev.LinkDown("device unplugged"), "link down: device unplugged"),
    (ev.Rejected(b"\x7e\x01", "CRC mismatch"), "rejected [7e 01]: CRC mismatch"),
]


@pytest.mark.parametrize(("event", "text"), TEXTS, ids=[type(e).__name__ for e, _ in TEXTS])
def test_an_event_reads_as_words(event: ev.DeviceEvent, text: str) -> None:
    assert str(event) == text
    assert f"{event}" == text  # as a log line's %s or an f-string shows it


def test_an_event_without_words_of_its_own_reads_as_its_name() -> None:
    from dataclasses import dataclass

    @dataclass(frozen=True, slots=True)
    class DoorOpened(ev.DeviceEvent):
        """A made-up event, as a new device may bring."""

    assert str(DoorOpened(seq=4)) == "door opened"


def test_sim_shoe_says_other_events_in_words() -> None:
    from baccarat.cli.sim import where
    from baccarat.sim_hardware.dealer import Step

    line = where(Step(ev.ShoeRemoved(), round_no=80, role="shoe"), 1, 416, 416)
    assert line == "shoe 1 round 80 shoe removed"
