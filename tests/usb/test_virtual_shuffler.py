"""The virtual shuffler's firmware, driven by a bare pyusb host (no transport)."""

from __future__ import annotations

import argparse
import time
from collections import Counter

import pytest
import usb.core
import usb.util

from baccarat.cards import ALL_CARDS
from baccarat.cli.sim_shuffler import add_device_arguments as add_shuffler_arguments
from baccarat.cli.sim_shuffler import demonstrate
from baccarat.cli.sim_shuffler import run_device as run_shuffler
from baccarat.drivers import framed
from baccarat.drivers.events import CardDrawn, DeviceEvent, Hello, ShuffleDone, ShuffleStarted
from baccarat.sim_hardware import virtual_shuffler
from baccarat.sim_hardware.usb_bus import ENDPOINT_IN, ENDPOINT_OUT
from baccarat.sim_hardware.virtual_shuffler import VirtualShuffler, shuffled_shoe


class BareHost:
    """A pyusb host that reads frames and acknowledges only when told to."""

    def __init__(self, shuffler: VirtualShuffler) -> None:
        self.device = usb.core.find(idVendor=0x1209, idProduct=0x0001, backend=shuffler.backend)
        self.device.set_configuration()
        usb.util.claim_interface(self.device, 0)
        self.decoder = framed.FramedDecoder()

    def read(self, timeout: float = 0.02) -> list[DeviceEvent]:
        """Everything the device sends before a read times out."""
        events: list[DeviceEvent] = []
        while True:
            try:
                chunk = self.device.read(ENDPOINT_IN, 512, round(timeout * 1000))
            except usb.core.USBTimeoutError:
                return events
            events += self.decoder.feed(bytes(chunk))

    def acknowledge(self) -> None:
        self.device.write(ENDPOINT_OUT, self.decoder.pending_output(), 100)

    def close(self) -> None:
        usb.util.dispose_resources(self.device)


def test_a_seed_gives_the_same_shuffled_shoe() -> None:
    shoe = shuffled_shoe(8, seed=11)
    assert shoe == shuffled_shoe(8, seed=11)
    assert shoe != shuffled_shoe(8, seed=12)
    assert Counter(shoe) == Counter(dict.fromkeys(ALL_CARDS, 8))


def test_the_shuffle_is_announced_and_the_window_limits_what_is_sent() -> None:
    shuffler = VirtualShuffler(decks=1, seed=1, window=4)
    host = BareHost(shuffler)
    first = host.read()
    assert first == [
        Hello(2, seq=0),
        ShuffleStarted(seq=1),
        ShuffleDone(seq=2),
        CardDrawn(shuffler.shoe[0], seq=3),
    ]  # 4 frames fill the window
    assert {e.session for e in first} == {shuffler.firmware.sender.session}
    host.acknowledge()
    assert [e.seq for e in host.read()] == [4, 5, 6, 7]
    host.close()


def test_unacknowledged_frames_are_sent_again_after_the_timeout() -> None:
    shuffler = VirtualShuffler(decks=1, seed=1, window=4)
    host = BareHost(shuffler)
    host.read()
    time.sleep(virtual_shuffler.RETRANSMIT_TIMEOUT)
    assert host.read() == []  # all four again (once, or more on a slow machine): duplicates
    assert host.decoder.counters["duplicates"] >= 4
    assert shuffler.firmware.sender.retransmissions == host.decoder.counters["duplicates"]
    host.close()


def test_frames_lost_in_an_unplug_are_retransmitted_after_the_replug() -> None:
    shuffler = VirtualShuffler(decks=1, seed=2, window=4)
    host = BareHost(shuffler)
    host.read()
    host.acknowledge()
    shuffler.detach()  # seqs 4..7 were in flight, or still in the FIFO
    shuffler.attach()
    host.close()
    host = BareHost(shuffler)  # a fresh host: it holds what comes and asks where to start
    time.sleep(virtual_shuffler.RETRANSMIT_TIMEOUT)
    assert host.read() == []
    host.acknowledge()  # no ACK, only the QUERY
    assert [e.seq for e in host.read()] == [4, 5, 6, 7]
    assert shuffler.firmware.unplugs == 1
    host.close()


def test_cards_come_out_at_the_pace() -> None:
    shuffler = VirtualShuffler(decks=1, seed=3, pace=0.05)
    host = BareHost(shuffler)
    started = time.monotonic()
    cards: list[DeviceEvent] = []
    while len(cards) < 4:
        cards += [e for e in host.read(0.01) if isinstance(e, CardDrawn)]
        host.acknowledge()
    assert time.monotonic() - started >= 4 * 0.05 * 0.9
    assert [e.card for e in cards if isinstance(e, CardDrawn)] == shuffler.shoe[:4]
    host.close()


def test_an_acknowledged_shoe_leaves_the_firmware_idle() -> None:
    shuffler = VirtualShuffler(decks=1, seed=4, heartbeat=False)
    host = BareHost(shuffler)
    cards = []
    while not shuffler.firmware.dealt_all:
        cards += [e.card for e in host.read(0.005) if isinstance(e, CardDrawn)]
        host.acknowledge()
    assert cards == shuffler.shoe
    assert shuffler.counters()["cards_queued"] == 52
    host.close()


async def test_the_demonstration_deals_an_exact_shoe_through_unplugs() -> None:
    lines: list[str] = []
    assert await demonstrate(1, 3, unplug_every=20, unplug_for=0.05, out=lines.append) == 0
    assert lines[-1] == "shoe received exactly"
    assert sum("LinkDown" in line for line in lines) == 2
    assert sum(" card " in line for line in lines) == 52


def test_the_sim_shuffler_command(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser()
    add_shuffler_arguments(parser)
    assert run_shuffler(parser.parse_args(["--decks", "1", "--seed", "9"])) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "shoe received exactly"
